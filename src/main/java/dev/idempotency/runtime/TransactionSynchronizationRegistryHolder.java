package dev.idempotency.runtime;

import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.core.TransactionBridge;

import jakarta.enterprise.inject.Default;
import jakarta.enterprise.inject.Instance;

import java.util.logging.Level;
import java.util.logging.Logger;

/** The JTA registry when there is one (bean or JNDI), kept apart so that no JTA class loads without JTA. */
public record TransactionSynchronizationRegistryHolder(jakarta.transaction.TransactionSynchronizationRegistry registry) {
    public static TransactionSynchronizationRegistryHolder find(Instance<Object> beans) {
        if (!JtaSupport.isAvailable()) {
            return new TransactionSynchronizationRegistryHolder(null);
        }
        Instance<jakarta.transaction.TransactionSynchronizationRegistry> bean =
                beans.select(jakarta.transaction.TransactionSynchronizationRegistry.class, Default.Literal.INSTANCE);
        if (bean.isResolvable()) {
            return new TransactionSynchronizationRegistryHolder(bean.get());
        }
        return new TransactionSynchronizationRegistryHolder(
                Lookups.jndi("java:comp/TransactionSynchronizationRegistry", jakarta.transaction.TransactionSynchronizationRegistry.class));
    }

    TransactionBridge bridge(Instance<Object> beans) {
        if (registry == null) {
            return TransactionBridge.NONE;
        }
        JtaSupport.RequiredBean required = beans.select(JtaSupport.RequiredBean.class).get();
        try {
            if (required.required(registry::getTransactionKey) == null) {
                Logger.getLogger(TransactionSynchronizationRegistryHolder.class.getName()).log(Level.WARNING, "No container interceptor for @Transactional applies to the library's beans: "
                        + "claims are leased");
                return new dev.idempotency.jta.JtaTransactionBridge(registry);
            }
        } catch (Exception e) {
            throw new IdempotencyConfigurationException("Could not begin a JTA transaction: " + e, e);
        }
        jakarta.transaction.UserTransaction ut = userTransaction(beans);
        Logger.getLogger(TransactionSynchronizationRegistryHolder.class.getName()).log(Level.FINE, "JTA: atomic claims {0}", ut == null ? "around calls only" : "around calls and HTTP requests");
        return new dev.idempotency.jta.JtaTransactionBridge(registry, required, ut);
    }

    /**
     * The container's UserTransaction (JNDI, else the built-in bean), for doors that begin on a thread. JNDI
     * first, looked up once: Weld's built-in bean looks the object up in JNDI again on every call (Payara: a
     * new InitialContext per begin, getStatus and commit, 7 % of an HTTP request's CPU).
     */
    private static jakarta.transaction.UserTransaction userTransaction(Instance<Object> beans) {
        jakarta.transaction.UserTransaction ut = Lookups.jndi("java:comp/UserTransaction", jakarta.transaction.UserTransaction.class);
        if (ut != null) {
            return ut;
        }
        try {
            Instance<jakarta.transaction.UserTransaction> bean = beans.select(jakarta.transaction.UserTransaction.class);
            if (bean.isResolvable()) {
                return bean.get();
            }
        } catch (RuntimeException e) {
            Logger.getLogger(TransactionSynchronizationRegistryHolder.class.getName()).log(Level.FINE, "No UserTransaction bean", e);
        }
        // Java SE with a transaction manager bean (Narayana's CDI integration): the same four operations.
        Instance<jakarta.transaction.TransactionManager> tm = beans.select(jakarta.transaction.TransactionManager.class);
        if (!tm.isResolvable()) {
            return null;
        }
        jakarta.transaction.TransactionManager m = tm.get();
        return new jakarta.transaction.UserTransaction() {
            @Override
            public void begin() throws jakarta.transaction.NotSupportedException, jakarta.transaction.SystemException {
                m.begin();
            }

            @Override
            public void commit() throws jakarta.transaction.RollbackException, jakarta.transaction.HeuristicMixedException,
                    jakarta.transaction.HeuristicRollbackException, jakarta.transaction.SystemException {
                m.commit();
            }

            @Override
            public void rollback() throws jakarta.transaction.SystemException {
                m.rollback();
            }

            @Override
            public void setRollbackOnly() throws jakarta.transaction.SystemException {
                m.setRollbackOnly();
            }

            @Override
            public int getStatus() throws jakarta.transaction.SystemException {
                return m.getStatus();
            }

            @Override
            public void setTransactionTimeout(int seconds) throws jakarta.transaction.SystemException {
                m.setTransactionTimeout(seconds);
            }
        };
    }
}

