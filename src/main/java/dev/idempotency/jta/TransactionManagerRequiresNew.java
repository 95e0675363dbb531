package dev.idempotency.jta;

import dev.idempotency.store.jpa.JtaTransactions;

import jakarta.transaction.Status;
import jakarta.transaction.SystemException;
import jakarta.transaction.Transaction;
import jakarta.transaction.TransactionManager;

import java.util.function.Supplier;

/**
 * A new transaction through a {@link TransactionManager} (suspend, begin, commit, resume): for Java SE with
 * a standalone transaction manager such as Narayana. In a Jakarta EE server the library uses a
 * {@code @Transactional(REQUIRES_NEW)} bean instead.
 */
public final class TransactionManagerRequiresNew implements JtaTransactions.RequiresNew, NewTransactions {

    private final TransactionManager tm;

    public TransactionManagerRequiresNew(TransactionManager tm) {
        this.tm = tm;
    }

    @Override
    public <T> T run(Supplier<T> work) {
        Transaction suspended = null;
        try {
            suspended = tm.suspend();
            tm.begin();
            T result;
            try {
                result = work.get();
            } catch (RuntimeException | Error e) {
                rollbackQuietly(e);
                throw e;
            }
            tm.commit();
            return result;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException("Transaction failed: " + e, e);
        } finally {
            if (suspended != null) {
                try {
                    int status = suspended.getStatus();
                    if (status != Status.STATUS_COMMITTED && status != Status.STATUS_ROLLEDBACK && status != Status.STATUS_NO_TRANSACTION) {
                        tm.resume(suspended);
                    }
                } catch (Exception e) {
                    throw new IllegalStateException("Could not resume the caller's transaction", e);
                }
            }
        }
    }

    /** REQUIRED: the caller's transaction when it has one, else a new one (see {@link NewTransactions}). */
    @Override
    public <T> T required(java.util.concurrent.Callable<T> work) throws Exception {
        int status = tm.getStatus();
        if (status == Status.STATUS_ACTIVE || status == Status.STATUS_MARKED_ROLLBACK) {
            return work.call();
        }
        tm.begin();
        T result;
        try {
            result = work.call();
        } catch (Exception | Error e) {
            rollbackQuietly(e);
            throw e;
        }
        if (tm.getStatus() == Status.STATUS_MARKED_ROLLBACK) {
            tm.rollback();
        } else {
            tm.commit();
        }
        return result;
    }

    private void rollbackQuietly(Throwable cause) {
        try {
            if (tm.getStatus() != Status.STATUS_NO_TRANSACTION) {
                tm.rollback();
            }
        } catch (SystemException | RuntimeException e) {
            cause.addSuppressed(e);
        }
    }
}
