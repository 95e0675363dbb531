package dev.idempotency.jta;

import java.util.concurrent.Callable;

/**
 * Begins a transaction around work when the caller has none (REQUIRED semantics): committed when the work
 * returns, rolled back when it throws (checked exceptions too) or when it marked the transaction for
 * rollback. In a Jakarta EE server the library uses a {@code @Transactional} bean; in Java SE,
 * {@link TransactionManagerRequiresNew#required(Callable)} over a transaction manager.
 */
public interface NewTransactions {

    <T> T required(Callable<T> work) throws Exception;
}
