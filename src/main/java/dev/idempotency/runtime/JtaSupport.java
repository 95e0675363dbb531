package dev.idempotency.runtime;

import dev.idempotency.store.jpa.JtaTransactions;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.transaction.Transactional;

import java.util.function.Supplier;

/**
 * JTA glue, loaded only when the JTA API is present: a {@code @Transactional(REQUIRES_NEW)} bean for the
 * store's own transactions (portable across servers, unlike a {@code TransactionManager}).
 */
public final class JtaSupport {

    private JtaSupport() {
    }

    public static boolean isAvailable() {
        try {
            Class.forName("jakarta.transaction.TransactionSynchronizationRegistry", false, JtaSupport.class.getClassLoader());
            Class.forName("jakarta.transaction.Transactional", false, JtaSupport.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    /**
     * Runs work in the caller's transaction or a new one (REQUIRED), through the container's
     * {@code @Transactional} interceptor: any exception, checked too, rolls it back.
     */
    @ApplicationScoped
    public static class RequiredBean implements dev.idempotency.jta.NewTransactions {
        @Override
        @Transactional(value = Transactional.TxType.REQUIRED, rollbackOn = Exception.class)
        public <T> T required(java.util.concurrent.Callable<T> work) throws Exception {
            return work.call();
        }
    }

    /** Runs work in a new transaction, through the container's {@code @Transactional} interceptor. */
    @ApplicationScoped
    public static class RequiresNewBean implements JtaTransactions.RequiresNew {
        @Override
        @Transactional(Transactional.TxType.REQUIRES_NEW)
        public <T> T run(Supplier<T> work) {
            return work.get();
        }
    }
}
