package dev.idempotency.runtime;

/**
 * A data source whose connections the library enlists in JTA transactions itself, one per transaction, where the
 * runtime's data sources are plain pools (Helidon MP). Its pool must hand out connections in auto-commit: the store
 * checks that when it starts ({@code isWrapperFor} this type).
 */
public interface EnlistingDataSource {

    /** Helidon's JTA adapter for JDBC, which enlists such a data source's connections (found by name). */
    String HELIDON_ADAPTER = "io.helidon.integrations.jta.jdbc.JtaAdaptingDataSource";
}
