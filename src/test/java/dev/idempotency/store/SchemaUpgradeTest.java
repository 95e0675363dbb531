package dev.idempotency.store;

import dev.idempotency.ForIdempotency;
import dev.idempotency.runtime.IdempotencyRuntime;
import dev.idempotency.core.Decision;
import dev.idempotency.core.Policy;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.store.jpa.JpaSchema;
import dev.idempotency.testing.IdempotencyWeld;
import dev.idempotency.testing.TestDatabase;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;

import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import javax.sql.DataSource;
import java.io.InputStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Issue 22 item 3: a deployment on release 0.1's table (its DDL as 0.1 shipped it, in src/test/resources/schema-0.1,
 * from commit ce47840; it names no version) with records in it. {@code idempotency.schema=create} migrates it to
 * the current version and every record is there and answers as before; {@code validate} fails naming the script
 * shipped in the jar, and deploys once that script ran as it is (as Flyway would run it).
 */
class SchemaUpgradeTest {

    static final int RECORDS = 60;
    static final Policy POLICY = new Policy(Duration.ofHours(1), Duration.ofSeconds(30), false, Duration.ZERO);
    static TestDatabase database;

    /** The database under test as the library's {@code @ForIdempotency DataSource}. */
    @ApplicationScoped
    public static class Database {
        @Produces
        @ForIdempotency
        DataSource dataSource() {
            return dataSourceOf(database);
        }
    }

    static DataSource dataSourceOf(TestDatabase db) {
        return (DataSource) Proxy.newProxyInstance(SchemaUpgradeTest.class.getClassLoader(), new Class<?>[] {DataSource.class},
                (proxy, method, args) -> switch (method.getName()) {
                    case "getConnection" -> db.connect();
                    case "isWrapperFor" -> false;
                    case "getLoginTimeout" -> 0;
                    case "hashCode" -> System.identityHashCode(proxy);
                    case "equals" -> proxy == args[0];
                    case "toString" -> "DataSource of " + db;
                    default -> null;
                });
    }

    /** A key's row id as release 0.1 computed it: SHA-256 over namespace, principal and key, each after its length. */
    static String id01(String namespace, String principal, String key) throws Exception {
        MessageDigest sha = MessageDigest.getInstance("SHA-256");
        for (String part : new String[] {namespace, principal, key}) {
            byte[] bytes = part.getBytes(StandardCharsets.UTF_8);
            sha.update((byte) (bytes.length >>> 8));
            sha.update((byte) bytes.length);
            sha.update(bytes);
        }
        return HexFormat.of().formatHex(sha.digest());
    }

    static String scriptName(TestDatabase db) {
        return switch (db) {
            case H2 -> "h2";
            case POSTGRES -> "postgresql";
            case MARIADB -> "mariadb";
        };
    }

    static void run(Connection c, String resource, ClassLoader loader) throws Exception {
        String text;
        try (InputStream in = loader.getResourceAsStream(resource)) {
            assertThat(in).as(resource).isNotNull();
            text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        try (Statement s = c.createStatement()) {
            for (String sql : text.replaceAll("(?m)^--.*$", "").split(";")) {
                if (!sql.isBlank()) {
                    s.execute(sql.strip());
                }
            }
        }
    }

    /** Release 0.1's table with {@link #RECORDS} rows as 0.1 wrote them: completed, kept failures and released claims. */
    static void tableOf01WithRecords(TestDatabase db) throws Exception {
        db.reset();
        long now = System.currentTimeMillis();
        try (Connection c = db.connect()) {
            run(c, "schema-0.1/" + scriptName(db) + ".sql", SchemaUpgradeTest.class.getClassLoader());
            try (PreparedStatement ps = c.prepareStatement("INSERT INTO idempotency_record (id, namespace, principal, idem_key,"
                    + " status, fingerprint, response, request_type, attempts, first_seen, last_seen, completed_at, expires_at,"
                    + " lease_until, owner, version) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
                for (int i = 0; i < RECORDS; i++) {
                    String status = i % 10 == 9 ? "IN_PROGRESS" : i % 10 == 8 ? "FAILED" : "COMPLETED";
                    boolean finished = !status.equals("IN_PROGRESS");
                    ps.setString(1, id01("payments", "alice", "key-" + i));
                    ps.setString(2, "payments");
                    ps.setString(3, "alice");
                    ps.setString(4, "key-" + i);
                    ps.setString(5, status);
                    ps.setString(6, "fp-" + i);
                    ps.setBytes(7, finished ? ("response " + i).getBytes(StandardCharsets.UTF_8) : null);
                    ps.setString(8, i % 2 == 0 ? "charge" : null);
                    ps.setInt(9, 1);
                    ps.setLong(10, now - 60_000);
                    ps.setLong(11, now - 60_000);
                    if (finished) {
                        ps.setLong(12, now - 59_000);
                    } else {
                        ps.setNull(12, java.sql.Types.BIGINT);
                    }
                    ps.setLong(13, now + 3_600_000);
                    ps.setNull(14, java.sql.Types.BIGINT); // a released claim: no lease, no owner
                    ps.setNull(15, java.sql.Types.VARCHAR);
                    ps.setLong(16, 2);
                    ps.addBatch();
                }
                ps.executeBatch();
            }
            if (!c.getAutoCommit()) {
                c.commit();
            }
        }
    }

    /** Every row, every column, in key order. */
    static List<Map<String, Object>> rows(TestDatabase db) throws Exception {
        List<Map<String, Object>> rows = new ArrayList<>();
        try (Connection c = db.connect(); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT * FROM idempotency_record ORDER BY id")) {
            ResultSetMetaData meta = rs.getMetaData();
            while (rs.next()) {
                Map<String, Object> row = new HashMap<>();
                for (int i = 1; i <= meta.getColumnCount(); i++) {
                    Object v = rs.getObject(i);
                    row.put(meta.getColumnLabel(i).toLowerCase(), v instanceof byte[] b ? HexFormat.of().formatHex(b)
                            : v instanceof Number n ? n.longValue() : v);
                }
                rows.add(row);
            }
        }
        return rows;
    }

    /**
     * The columns of each unique index of the record table (lower case, in index order): since schema version 3 only the
     * primary key's, {@code [id]}.
     */
    static List<List<String>> uniqueIndexes(TestDatabase db) throws Exception {
        Map<String, List<String>> indexes = new java.util.TreeMap<>();
        try (Connection c = db.connect()) {
            for (String table : new String[] {"idempotency_record", "IDEMPOTENCY_RECORD"}) {
                try (ResultSet rs = c.getMetaData().getIndexInfo(c.getCatalog(), null, table, true, false)) {
                    while (rs.next()) {
                        if (rs.getString("INDEX_NAME") != null && rs.getString("COLUMN_NAME") != null) {
                            indexes.computeIfAbsent(rs.getString("INDEX_NAME"), k -> new ArrayList<>())
                                    .add(rs.getString("COLUMN_NAME").toLowerCase(java.util.Locale.ROOT));
                        }
                    }
                }
                if (!indexes.isEmpty()) {
                    break; // the table's name as this database keeps it
                }
            }
        }
        return new ArrayList<>(indexes.values());
    }

    static int version(TestDatabase db) throws Exception {
        try (Connection c = db.connect()) {
            return JpaSchema.version(c);
        }
    }

    static WeldContainer deploy(String schema) {
        return IdempotencyWeld.weld(Map.of("idempotency.schema", schema), Database.class).initialize();
    }

    /** {@code update}, the name Hibernate users reach for, is {@code create} (which creates and migrates); a typo is named. */
    @org.junit.jupiter.api.Test
    void updateIsASynonymOfCreateAndAnUnknownModeIsAnError() {
        dev.idempotency.config.ConfigErrors errors = new dev.idempotency.config.ConfigErrors();
        assertThat(dev.idempotency.config.GlobalSettings.read(IdempotencyWeld.config(Map.of("idempotency.schema", "update")), errors)
                .schema()).isEqualTo("create");
        assertThat(errors.all()).isEmpty();
        dev.idempotency.config.GlobalSettings.read(IdempotencyWeld.config(Map.of("idempotency.schema", "upgrade")), errors);
        assertThat(errors.all()).singleElement().satisfies(e -> assertThat(e.getMessage()).contains("idempotency.schema"));
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void createMigratesTheTableOf01AndLosesNoRecord(TestDatabase db) throws Exception {
        db.assumeAvailable();
        database = db;
        tableOf01WithRecords(db);
        List<Map<String, Object>> before = rows(db);
        assertThat(before).hasSize(RECORDS);
        assertThat(version(db)).as("0.1's table names no version").isEqualTo(1);

        assertThat(uniqueIndexes(db)).as("0.1's table: the primary key and the unique constraint on the scope").hasSize(2);

        try (WeldContainer c = deploy("create")) {
            assertThat(version(db)).isEqualTo(JpaSchema.VERSION);
            assertThat(rows(db)).as("every record, every column, as it was").isEqualTo(before);
            assertThat(uniqueIndexes(db)).as("version 3: one unique index, the primary key").containsExactly(List.of("id"));
            var engine = c.select(IdempotencyRuntime.class).get().engine();
            for (int i = 0; i < RECORDS; i++) {
                Decision d = engine.begin(new ScopedKey("payments", "alice", "key-" + i), "fp-" + i, null, POLICY);
                if (i % 10 == 9) {
                    assertThat(d).as("a released claim of 0.1 is claimable").isInstanceOf(Decision.Proceed.class);
                    engine.complete(((Decision.Proceed) d).ticket(), ("response " + i).getBytes(StandardCharsets.UTF_8));
                } else {
                    assertThat(d).as("key-" + i).isInstanceOf(Decision.Replay.class);
                    var replayed = ((Decision.Replay) d).record();
                    assertThat(replayed.response()).isEqualTo(("response " + i).getBytes(StandardCharsets.UTF_8));
                    assertThat(replayed.status()).isEqualTo(i % 10 == 8 ? RecordStatus.FAILED : RecordStatus.COMPLETED);
                }
            }
        }
        assertThat(rows(db)).hasSize(RECORDS);
        try (WeldContainer ignored = deploy("create")) {
            assertThat(version(db)).as("a second deployment finds the current version").isEqualTo(JpaSchema.VERSION);
        }
    }

    /**
     * A table with no table of versions and no unique constraint on the scope, as a JPA provider's schema generation makes
     * it from the entity (Hibernate's drop-and-create on Quarkus): migrated to the current version, the drop of the
     * constraint it never had taken as done, every record kept and answered.
     */
    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void aTableMadeFromTheEntityIsMigratedWithoutTheConstraintItNeverHad(TestDatabase db) throws Exception {
        db.assumeAvailable();
        database = db;
        tableOf01WithRecords(db);
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            s.execute(db == TestDatabase.MARIADB ? "ALTER TABLE idempotency_record DROP INDEX uq_idempotency_scope"
                    : "ALTER TABLE idempotency_record DROP CONSTRAINT uq_idempotency_scope");
        }
        List<Map<String, Object>> before = rows(db);
        assertThat(uniqueIndexes(db)).as("as made from the entity: the primary key alone").containsExactly(List.of("id"));
        assertThat(version(db)).isEqualTo(1);

        try (WeldContainer c = deploy("create")) {
            assertThat(version(db)).isEqualTo(JpaSchema.VERSION);
            assertThat(rows(db)).as("every record, as it was").isEqualTo(before);
            var replayed = c.select(IdempotencyRuntime.class).get().engine().begin(new ScopedKey("payments", "alice", "key-0"),
                    "fp-0", null, POLICY);
            assertThat(replayed).isInstanceOf(Decision.Replay.class);
        }
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void validateFailsNamingTheShippedScriptWhichRunsAsItIs(TestDatabase db) throws Exception {
        db.assumeAvailable();
        database = db;
        tableOf01WithRecords(db);
        List<Map<String, Object>> before = rows(db);
        String v2 = "META-INF/idempotency/migration/" + scriptName(db) + "/V2__idempotency_schema_version.sql";
        String v3 = "META-INF/idempotency/migration/" + scriptName(db) + "/V3__drop_scope_constraint.sql";

        assertThatThrownBy(() -> deploy("validate").close())
                .hasStackTraceContaining("The table idempotency_record is at schema version 1 (release 0.1); this version of "
                        + "idempotency-jakarta needs version 3 (idempotency.schema=validate). Run the migration script shipped in "
                        + "the jar: " + v2 + ", then " + v3 + ", or set idempotency.schema=create to let the library run it");
        assertThat(version(db)).as("validate changes nothing").isEqualTo(1);

        // What a Flyway (or Liquibase, or DBA) user does: run the jar's scripts as they are. Version 2's table is used as
        // it is (with a warning naming the third script), and so is version 3's.
        runScript(db, v2);
        java.util.logging.Logger log = java.util.logging.Logger.getLogger(JpaSchema.class.getName());
        List<String> warnings = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.logging.Handler handler = new java.util.logging.Handler() {
            @Override
            public void publish(java.util.logging.LogRecord r) {
                if (r.getLevel() == java.util.logging.Level.WARNING) {
                    warnings.add(java.text.MessageFormat.format(r.getMessage(), r.getParameters()));
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        log.addHandler(handler);
        try (WeldContainer deployed = deploy("validate")) {
            assertThat(version(db)).isEqualTo(2);
            assertThat(rows(db)).isEqualTo(before);
            Decision d = deployed.select(IdempotencyRuntime.class).get().engine()
                    .begin(new ScopedKey("payments", "alice", "key-0"), "fp-0", null, POLICY);
            assertThat(d).as("a record of 0.1 answers on version 2's table").isInstanceOf(Decision.Replay.class);
        } finally {
            log.removeHandler(handler);
        }
        assertThat(warnings).anySatisfy(w -> assertThat(w).contains("is at schema version 2").contains(v3));
        runScript(db, v3);
        try (WeldContainer ignored = deploy("validate")) {
            assertThat(version(db)).isEqualTo(3);
            assertThat(rows(db)).isEqualTo(before);
            assertThat(uniqueIndexes(db)).containsExactly(List.of("id"));
        }
    }

    static void runScript(TestDatabase db, String script) throws Exception {
        try (Connection c = db.connect()) {
            run(c, script, JpaSchema.class.getClassLoader());
            if (!c.getAutoCommit()) {
                c.commit();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void aMissingTableIsCreatedAtTheCurrentVersionAndValidateNamesTheScripts(TestDatabase db) throws Exception {
        db.assumeAvailable();
        database = db;
        db.reset();
        assertThatThrownBy(() -> deploy("validate").close())
                .hasStackTraceContaining("The table idempotency_record does not exist (idempotency.schema=validate). Create it with "
                        + "META-INF/idempotency/migration/" + scriptName(db) + "/V1__idempotency_record.sql, then "
                        + "META-INF/idempotency/migration/" + scriptName(db) + "/V2__idempotency_schema_version.sql");
        try (Connection c = db.connect(); Statement s = c.createStatement()) {
            // A version table left behind by a dropped record table describes nothing: create drops it and starts over.
            run(c, "META-INF/idempotency/migration/" + scriptName(db) + "/V1__idempotency_record.sql", JpaSchema.class.getClassLoader());
            run(c, "META-INF/idempotency/migration/" + scriptName(db) + "/V2__idempotency_schema_version.sql", JpaSchema.class.getClassLoader());
            s.execute("DROP TABLE idempotency_record");
        }
        try (WeldContainer ignored = deploy("create")) {
            assertThat(version(db)).isEqualTo(JpaSchema.VERSION);
            assertThat(uniqueIndexes(db)).as("created at version 3: one unique index, the primary key").containsExactly(List.of("id"));
        }
    }

    /** Nodes starting at once on one database: each script runs once, every node deploys, no record is lost. */
    @ParameterizedTest
    @EnumSource(TestDatabase.class)
    void fourNodesPreparingAtOnceCreateOrMigrateOnce(TestDatabase db) throws Exception {
        db.assumeAvailable();
        for (boolean from01 : new boolean[] {false, true}) {
            if (from01) {
                tableOf01WithRecords(db);
            } else {
                db.reset();
            }
            List<Map<String, Object>> before = from01 ? rows(db) : List.of();
            java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
            var pool = java.util.concurrent.Executors.newFixedThreadPool(4);
            try {
                List<java.util.concurrent.Future<JpaSchema.Prepared>> nodes = new ArrayList<>();
                for (int i = 0; i < 4; i++) {
                    nodes.add(pool.submit(() -> {
                        go.await();
                        return JpaSchema.prepare(dataSourceOf(db), "create");
                    }));
                }
                go.countDown();
                for (var node : nodes) {
                    assertThat(node.get(60, java.util.concurrent.TimeUnit.SECONDS)).isNotNull();
                }
            } finally {
                pool.shutdownNow();
            }
            assertThat(version(db)).isEqualTo(JpaSchema.VERSION);
            assertThat(db.count("select count(*) from idempotency_schema_version")).isEqualTo(JpaSchema.VERSION);
            assertThat(rows(db)).isEqualTo(before);
        }
    }

    /** The scripts as Flyway (and Liquibase's sqlFile) take them: V<n>__<what>.sql per database; the whole DDL is their sum. */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(strings = {"h2", "postgresql", "mariadb", "derby"})
    void theScriptsAreLaidOutForFlywayAndAddUpToTheWholeDdl(String name) {
        List<String> all = new ArrayList<>();
        for (int v = 1; v <= JpaSchema.VERSION; v++) {
            String resource = JpaSchema.migrationResource(name, v);
            assertThat(resource).matches("META-INF/idempotency/migration/" + name + "/V" + v + "__[a-z_]+\\.sql");
            all.addAll(JpaSchema.statements(resource));
        }
        assertThat(JpaSchema.statements("META-INF/idempotency/ddl/" + name + ".sql")).isEqualTo(all);
        assertThat(Pattern.compile("db/migration").matcher(JpaSchema.migrationResource(name, 1)).find())
                .as("not under Flyway's default location, which an application's Flyway scans").isFalse();
    }
}
