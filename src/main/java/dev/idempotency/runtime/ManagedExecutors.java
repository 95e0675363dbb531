package dev.idempotency.runtime;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;

/**
 * Where the library's background work runs: the server's managed executor and scheduler (naming and class loader
 * context come along), else pools of its own, shut down with the application.
 */
@ApplicationScoped
public class ManagedExecutors {

    private ExecutorService executor;
    private ExecutorService ownExecutor;
    private ScheduledExecutorService scheduler;
    private ScheduledExecutorService ownScheduler;

    /** For store work on a clean thread (a release after a rolled back transaction, REQUIRES_NEW in Java SE). */
    public synchronized ExecutorService executor() {
        if (executor == null) {
            executor = Lookups.jndi("java:comp/DefaultManagedExecutorService", ExecutorService.class);
            if (executor == null) {
                executor = ownExecutor = Executors.newCachedThreadPool(daemon("idempotency-store"));
            }
        }
        return executor;
    }

    /** For the purge, the lease heartbeats and the store clock's resync. */
    public synchronized ScheduledExecutorService scheduler() {
        if (scheduler == null) {
            scheduler = Lookups.jndi("java:comp/DefaultManagedScheduledExecutorService", ScheduledExecutorService.class);
            if (scheduler == null) {
                ScheduledThreadPoolExecutor own = new ScheduledThreadPoolExecutor(1, daemon("idempotency-scheduler"));
                own.setRemoveOnCancelPolicy(true); // a cancelled heartbeat leaves no task behind
                scheduler = ownScheduler = own;
            }
        }
        return scheduler;
    }

    @PreDestroy
    synchronized void stop() {
        if (ownScheduler != null) {
            ownScheduler.shutdownNow();
        }
        if (ownExecutor != null) {
            ownExecutor.shutdown();
        }
    }

    private static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }
}
