package dev.idempotency.example;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;

import jakarta.enterprise.context.ApplicationScoped;

import java.util.concurrent.atomic.AtomicLong;

/** In-server test bean whose behaviour comes from META-INF/microprofile-config.properties. */
@ApplicationScoped
public class ItConfigured {

    private final AtomicLong runs = new AtomicLong();

    /** Switched off by configuration: runs every time. */
    @Idempotent
    public long switchedOff(@IdempotencyKey String key) {
        return runs.incrementAndGet();
    }

    /** Its ttl comes from configuration (PT2H). */
    @Idempotent
    public long configuredTtl(@IdempotencyKey String key) {
        return runs.incrementAndGet();
    }
}
