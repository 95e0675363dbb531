package dev.idempotency.quarkus;

import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * An application whose Hibernate makes its schema from the entities at every start ({@code drop-and-create}, as in
 * Quarkus's dev mode): the records' table, made from the library's entity, is taken as it is, and a key still runs
 * once and answers its retries.
 */
@QuarkusTest
@TestProfile(QuarkusHibernateDropAndCreateTest.DropAndCreate.class)
class QuarkusHibernateDropAndCreateTest {

    /** Hibernate's schema management on. */
    public static class DropAndCreate implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            if ("postgresql".equals(System.getProperty("quarkus.test.profile"))) {
                return Map.of("quarkus.hibernate-orm.schema-management.strategy", "drop-and-create");
            }
            // on H2, a database of its own: the library meets the table Hibernate made, and no table of its versions
            return Map.of("quarkus.hibernate-orm.schema-management.strategy", "drop-and-create",
                    "quarkus.datasource.jdbc.url", "jdbc:h2:mem:hibernate-made;DB_CLOSE_DELAY=-1");
        }
    }

    @Inject
    Charges charges;

    @Inject
    Ledger ledger;

    @Test
    void aKeyRunsOnceOnTheTableHibernateMade() {
        String key = "drop-and-create-" + UUID.randomUUID();
        Receipt first = charges.atomic(key, 3);
        assertEquals(first, charges.atomic(key, 3), "the retry is the first answer");
        assertEquals(1, ledger.rows(key));
        assertEquals(1, ledger.runs(key));
        assertEquals(1, ledger.records(key), "one record, in the table Hibernate made");
    }
}
