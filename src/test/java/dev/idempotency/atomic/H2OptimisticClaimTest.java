package dev.idempotency.atomic;

import dev.idempotency.testing.TestDatabase;

import org.h2.tools.Server;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.sql.SQLException;

/** Optimistic claims on an H2 TCP server, which the other JVMs share; the assertions are in OptimisticClaimContract. */
class H2OptimisticClaimTest extends OptimisticClaimContract {

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
        return "jdbc:h2:tcp://127.0.0.1:" + server.getPort() + "/mem:optimistic;DB_CLOSE_DELAY=-1;LOCK_TIMEOUT=10000";
    }

    /** The record's MERGE (a new key inserted, a committed one left alone). */
    @Override
    String recordInsert() {
        return "merge into idempotency_record";
    }
}
