package dev.idempotency.runtime;

import dev.idempotency.IdempotencyManager;
import dev.idempotency.config.GlobalSettings;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.spi.ManagementPolicy;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Default;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;

import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/** The purge of expired records (in bounded batches) and the management policy of each run, on the managed scheduler. */
@ApplicationScoped
public class PurgeSchedule {

    private static final Logger LOG = Logger.getLogger(PurgeSchedule.class.getName());

    @Inject
    @Any
    Instance<Object> beans;

    @Inject
    IdempotencyDeployment deployment;

    @Inject
    ManagedExecutors executors;

    private volatile IdempotencyEngine engine;
    private ScheduledFuture<?> purge;

    /** Starts purging the engine's store every {@code idempotency.purge.interval}. */
    synchronized void start(IdempotencyEngine engine) {
        this.engine = engine;
        schedulePurge(settings());
    }

    private GlobalSettings settings() {
        return deployment.globalSettings();
    }

    /** Purges expired records now, batch by batch; returns how many it deleted. */
    public int purgeNow() {
        IdempotencyEngine e = engine;
        int batch = settings().purgeBatchSize();
        int total = 0;
        for (int round = 0; round < 100; round++) {
            int n = e.store().purgeExpired(e.clock().instant(), batch);
            total += n;
            if (n < batch) {
                break;
            }
        }
        if (total > 0) {
            LOG.log(Level.FINE, "Purged {0} expired records", total);
        }
        applyPolicy();
        return total;
    }

    /** The management policy of each purge run: the application's bean, else idempotency.manager.policy. */
    private void applyPolicy() {
        Instance<ManagementPolicy> own = beans.select(ManagementPolicy.class, Default.Literal.INSTANCE);
        IdempotencyManager manager = beans.select(IdempotencyManager.class, Default.Literal.INSTANCE).get();
        if (own.isResolvable()) {
            own.get().apply(manager);
            return;
        }
        switch (settings().managerPolicy()) {
            case "age" -> manager.clearOlderThan(settings().managerMaxAge());
            case "size" -> manager.trimTo(settings().managerMaxRecords());
            default -> {
            }
        }
    }


    private void schedulePurge(GlobalSettings s) {
        ScheduledExecutorService scheduler = executors.scheduler();
        long period = s.purgeInterval().toMillis();
        purge = scheduler.scheduleWithFixedDelay(() -> {
            try {
                purgeNow();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "Purging expired idempotency records failed; will try again in " + s.purgeInterval(), e);
            }
        }, period, period, TimeUnit.MILLISECONDS);
    }


    @PreDestroy
    synchronized void stop() {
        if (purge != null) {
            purge.cancel(false);
        }
    }
}
