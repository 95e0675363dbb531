package dev.idempotency.cdi;

import dev.idempotency.spi.ScopedKey;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import org.eclipse.microprofile.health.HealthCheck;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.eclipse.microprofile.health.HealthCheckResponseBuilder;
import org.eclipse.microprofile.health.Readiness;

/**
 * MicroProfile Health readiness ({@code idempotency}): the store answers a read, and a clustered cache
 * sees at least {@code idempotency.health.min-members} members; a remote cache is reported (reachable or not) but
 * never takes the node out, since the store answers without it. Registered only when MicroProfile Health is
 * there.
 */
@Readiness
@ApplicationScoped
public class IdempotencyReadinessCheck implements HealthCheck {

    private static final ScopedKey PROBE = new ScopedKey("idempotency-health", "", "probe");

    @Inject
    IdempotencyRuntime runtime;

    @Inject
    dev.idempotency.core.IdempotencyEngine engine;

    @Override
    public HealthCheckResponse call() {
        HealthCheckResponseBuilder b = HealthCheckResponse.named("idempotency").up();
        try {
            engine.store().find(PROBE);
            b.withData("store", "UP");
        } catch (RuntimeException e) {
            b.down().withData("store", "DOWN: " + e.getClass().getSimpleName());
        }
        var cache = runtime.recordCache();
        if (cache != null && cache.members() < 0) {
            // A cache elsewhere (an Infinispan Server): while it is unreachable the store answers (slower, still
            // exactly once), so this node stays ready.
            b.withData("cache", cache.reachable() ? "UP" : "UNREACHABLE: the store answers");
        } else if (cache != null) {
            int members = cache.members();
            b.withData("cache-members", members);
            if (members < runtime.settings().healthMinMembers()) {
                b.down().withData("cache", "DOWN: " + members + " of at least " + runtime.settings().healthMinMembers() + " members");
            }
        }
        return b.build();
    }
}
