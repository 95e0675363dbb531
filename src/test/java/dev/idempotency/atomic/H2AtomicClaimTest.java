package dev.idempotency.atomic;

import dev.idempotency.testing.TestDatabase;

import org.h2.tools.Server;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.sql.SQLException;
import java.util.List;

/** Atomic claims on an H2 TCP server, so that the JVM the crash test kills shares the database; the assertions are in AtomicClaimContract. */
class H2AtomicClaimTest extends AtomicClaimContract {

    private static Server server;

    @BeforeAll
    static void startServer() throws SQLException {
        server = Server.createTcpServer("-tcpPort", "0", "-ifNotExists").start();
    }

    @AfterAll
    static void stopServer() {
        server.stop();
    }

    @Override
    TestDatabase database() {
        return TestDatabase.H2;
    }

    @Override
    String url() {
        return "jdbc:h2:tcp://127.0.0.1:" + server.getPort() + "/mem:atomic;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";
    }

    /**
     * One statement: a {@code MERGE ... WHEN NOT MATCHED THEN INSERT}, which inserts a new key and leaves a
     * committed one alone (like a plain insert, it waits for another transaction's uncommitted row of the key
     * and then fails when that one committed: the duplicate's transaction is retried).
     */
    @Override
    List<String> claimStatements() {
        return List.of("merge into idempotency_record");
    }
}
