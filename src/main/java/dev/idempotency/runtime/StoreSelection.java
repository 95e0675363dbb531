package dev.idempotency.runtime;

import dev.idempotency.ForIdempotency;
import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.config.ConfigKey;
import dev.idempotency.config.GlobalSettings;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.store.jpa.BoundedDataSource;
import dev.idempotency.store.jpa.ConnectionSharing;
import dev.idempotency.store.jpa.IdempotencyPersistenceUnit;
import dev.idempotency.store.jpa.IdempotencyRecordEntity;
import dev.idempotency.store.jpa.JpaIdempotencyStore;
import dev.idempotency.store.jpa.JpaSchema;
import dev.idempotency.store.jpa.JpaTransactions;
import dev.idempotency.store.jpa.JtaTransactions;
import dev.idempotency.store.jpa.ResourceLocalTransactions;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Default;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.literal.NamedLiteral;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.Persistence;

import javax.sql.DataSource;
import java.util.logging.Level;
import java.util.logging.Logger;

/** Chooses and starts the store (the JPA store, the in-memory one, or the application's own): one job, and closes what it opened. */
@ApplicationScoped
public class StoreSelection {

    private final java.util.List<Runnable> beforeStop = new java.util.concurrent.CopyOnWriteArrayList<>();

    /**
     * How long a statement of the store's may go without an answer from the database: the connection timeout, or a
     * second more than the longest lock wait a claim statement asks for, if that is longer.
     */
    static java.time.Duration statementBound(GlobalSettings s) {
        java.time.Duration longest = s.lockTimeout().compareTo(s.claimLockTimeout()) > 0 ? s.lockTimeout() : s.claimLockTimeout();
        // in whole seconds, as MariaDB's lock wait and the JDBC query timeouts count them, and a second more
        java.time.Duration locks = java.time.Duration.ofSeconds((longest.toMillis() + 999) / 1000 + 1);
        return s.connectionTimeout().compareTo(locks) >= 0 ? s.connectionTimeout() : locks;
    }

    private static final Logger LOG = Logger.getLogger(StoreSelection.class.getName());

    @Inject
    @Any
    Instance<Object> beans;

    @Inject
    ManagedExecutors executors;

    private EntityManagerFactory ownEmf;
    private BoundedDataSource bounded;
    private volatile String connectionProblem;

    /**
     * Why atomic and optimistic claims cannot work on the store's data source, naming the fix; {@code null} when they
     * can, or when that could not be checked (a store or persistence unit of the application's, a database the check
     * does not know).
     */
    String connectionProblem() {
        return connectionProblem;
    }

    /** {@link ConnectionSharing}'s check of the data source, and what it found in words ({@code null}: nothing wrong). */
    private static String checkSharing(DataSource ds, JtaTransactions.RequiresNew requiresNew, String name) {
        ConnectionSharing.Finding found;
        try {
            found = ConnectionSharing.check(ds, requiresNew::run);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Could not check whether the data source shares a transaction's connection; taken to share it", e);
            return null;
        }
        LOG.log(Level.FINE, "One transaction asked the data source for a second connection while its first was open: {0}", found);
        if (found != ConnectionSharing.Finding.NOT_SHARED) {
            return null;
        }
        if (Lookups.present("io.helidon.microprofile.cdi.HelidonContainer") && !Lookups.present(EnlistingDataSource.HELIDON_ADAPTER)) {
            // Helidon's data sources are plain pools: no connection of theirs joins a JTA transaction
            return "the records' data source (" + name + ") does not join JTA transactions: on Helidon MP add "
                    + "io.helidon.integrations.jta:helidon-integrations-jta-jdbc to the application, and the library enlists "
                    + "the data source's connections itself, one per transaction (the @ForIdempotency DataSource bean)";
        }
        return "the records' data source (" + name + ") hands a transaction a second connection while its first is open, so "
                + "each call would take a second connection for a moment, and a burst of more calls than the pool has connections "
                + "would stall until the pool gives up. On Payara and GlassFish, make the pool an XA type: asadmin set "
                + "resources.jdbc-connection-pool.<pool>.res-type=javax.sql.XADataSource (Payara's default data source: H2Pool), "
                + "or create it with --restype=javax.sql.XADataSource";
    }

    /**
     * Where the library enlists the records' pool itself (Helidon MP): Helidon's adapter enlists only connections in
     * auto-commit, and refuses every other in every transaction, the store's leased ones included; such a pool fails
     * the start. A pool that cannot be reached now is left to the store's first statements.
     */
    private static void checkEnlistable(DataSource ds) {
        boolean autoCommit;
        try {
            // (not unwrap: a container's proxy answers itself where the bean answers itself)
            if (!ds.isWrapperFor(EnlistingDataSource.class)) {
                return;
            }
            try (java.sql.Connection c = ds.getConnection()) { // outside a transaction: the pool's, not enlisted
                autoCommit = c.getAutoCommit();
            }
        } catch (java.sql.SQLException | RuntimeException | LinkageError e) {
            return; // not ours to judge (a pool that does not answer isWrapperFor), or not reachable now
        }
        if (!autoCommit) {
            throw new IdempotencyConfigurationException("The records' data source (" + ds + ") hands out connections out "
                    + "of auto-commit, and Helidon's JTA adapter enlists only connections in auto-commit: leave the pool's "
                    + "autoCommit at true (HikariCP's default)");
        }
    }

    /**
     * The application's own {@link IdempotencyStore} bean, else the in-memory store or the JPA store by configuration
     * (the application's unit, EntityManagerFactory or DataSource, else the server's default data source).
     */
    public IdempotencyStore create(GlobalSettings s, TransactionSynchronizationRegistryHolder tsr) {
        Instance<IdempotencyStore> own = beans.select(IdempotencyStore.class, Default.Literal.INSTANCE);
        if (own.isResolvable()) {
            return own.get();
        }
        if (!own.isUnsatisfied()) {
            throw new IdempotencyConfigurationException("More than one IdempotencyStore bean: keep one");
        }
        if (s.store().equals("memory")) {
            return new InMemoryIdempotencyStore();
        }
        EntityManagerFactory emf = Lookups.qualified(beans, EntityManagerFactory.class);
        JpaIdempotencyStore.InsertIfAbsent insertIfAbsent = JpaIdempotencyStore.InsertIfAbsent.PORTABLE;
        if (emf == null && !s.persistenceUnit().isEmpty()) {
            emf = ownEmf = Persistence.createEntityManagerFactory(s.persistenceUnit(), s.jpaProperties());
        }
        DataSource ownUnitsDataSource = null;
        String dataSourceName = null;
        if (emf == null) {
            DataSource ds = Lookups.qualified(beans, DataSource.class);
            dataSourceName = "the @ForIdempotency DataSource";
            if (ds == null) {
                ds = Lookups.jndi(s.datasource(), DataSource.class);
                dataSourceName = s.datasource();
            }
            EntityManagerFactory applicationsUnit = null;
            boolean byDefault = s.datasource().equals(ConfigKey.DATASOURCE.defaultValue());
            if (ds == null && !Lookups.jndiPresent()) {
                // No JNDI (Quarkus, Helidon): the application's default data source bean, or the one named so; and where
                // no unit can be made at run time (Quarkus), the application's default unit, which holds the record entity
                ds = Lookups.resolved(beans, DataSource.class, byDefault ? Default.Literal.INSTANCE : NamedLiteral.of(s.datasource()));
                dataSourceName = byDefault ? "the default DataSource bean" : "the DataSource bean @Named(\"" + s.datasource() + "\")";
                if (ds != null && byDefault) {
                    applicationsUnit = holdingRecords(Lookups.resolved(beans, EntityManagerFactory.class, Default.Literal.INSTANCE));
                    checkUnitsDataSource(applicationsUnit);
                }
            }
            if (ds == null) {
                throw new IdempotencyConfigurationException("The JPA store has no database: no @ForIdempotency DataSource or "
                        + "EntityManagerFactory bean, no idempotency.persistence-unit, and no data source at " + s.datasource()
                        + (byDefault ? " nor a default DataSource bean" : " nor a DataSource bean @Named(\"" + s.datasource() + "\")")
                        + ". Set one of those, or idempotency.store=memory");
            }
            // Every connection the store takes, its JDBC statements' and its JPA provider's, waits at most the library's bound;
            // and each of its statements answers within it, or within the longest lock wait it may ask for, and a second.
            checkEnlistable(ds);
            bounded = new BoundedDataSource(ds, s.connectionTimeout(), statementBound(s));
            ds = bounded;
            DataSource schemaSource = bounded.withoutStatementBound(); // an index on a large table may take a while
            // The store starts on first use, which may be inside a container transaction (a message-driven bean's
            // onMessage): the schema's statements and the database's name are read on a thread of their own, outside
            // it (a JTA data source refuses setAutoCommit in a global transaction, and DDL must not join the caller's).
            insertIfAbsent = outsideAnyTransaction(tsr, () -> {
                if (!s.schema().equals("none")) {
                    // create: creates or migrates the table (JpaSchema logs what it did); validate: fails on an older one.
                    JpaSchema.prepare(schemaSource, s.schema());
                }
                return JpaSchema.insertIfAbsent(schemaSource);
            });
            emf = applicationsUnit != null ? applicationsUnit : (ownEmf = ownUnit(ds, tsr.registry() != null, s));
            ownUnitsDataSource = ds;
        }
        // With JTA present (a server, or a transaction manager in Java SE) the unit is taken to be a JTA one.
        JpaTransactions transactions;
        if (tsr.registry() != null) {
            JtaTransactions.RequiresNew requiresNew = beans.select(JtaSupport.RequiresNewBean.class).get();
            Object inside = requiresNew.run(() -> tsr.registry().getTransactionKey());
            if (inside == null) {
                throw new IdempotencyConfigurationException("No container interceptor for @Transactional(REQUIRES_NEW) applies to "
                        + "the library's beans, so the store cannot run the claim in a transaction of its own");
            }
            LOG.log(Level.INFO, "JPA store on {0} (JTA, {1})", new Object[] {emf.getClass().getName(), emf.getProperties().entrySet().stream()
                    .filter(e -> e.getKey().contains("target-server") || e.getKey().contains("jta.platform"))
                    .map(Object::toString).toList()});
            // On the unit's own data source, an atomic claim's hot statements run in plain JDBC on the transaction's
            // connection; on an application's unit (its EntityManagerFactory bean or persistence unit), through JPA.
            transactions = new JtaTransactions(emf, tsr.registry(), requiresNew, executors.executor(), ownUnitsDataSource);
            if (ownUnitsDataSource != null) {
                connectionProblem = checkSharing(ownUnitsDataSource, requiresNew, dataSourceName);
            }
        } else {
            transactions = new ResourceLocalTransactions(emf);
        }
        return new JpaIdempotencyStore(transactions, s.lockTimeout(), insertIfAbsent);
    }


    /**
     * The application's unit when it manages the record entity (on Quarkus, the jar's entity joins the default unit),
     * else {@code null}.
     */
    private static EntityManagerFactory holdingRecords(EntityManagerFactory unit) {
        if (unit == null) {
            return null;
        }
        try {
            unit.getMetamodel().entity(IdempotencyRecordEntity.class);
            return unit;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * The claim's statements run on the default data source and the rest through the default unit: on Quarkus, the unit
     * must be on that data source ({@code quarkus.hibernate-orm.datasource} left unset), or claims and answers would go
     * to two databases.
     */
    private static void checkUnitsDataSource(EntityManagerFactory unit) {
        if (unit == null) {
            return;
        }
        String named = org.eclipse.microprofile.config.ConfigProvider.getConfig(Thread.currentThread().getContextClassLoader() != null
                ? Thread.currentThread().getContextClassLoader() : StoreSelection.class.getClassLoader())
                .getOptionalValue("quarkus.hibernate-orm.datasource", String.class).orElse("<default>");
        if (!named.equals("<default>")) {
            throw new IdempotencyConfigurationException("The default persistence unit, which holds the records, is on the data "
                    + "source " + named + " (quarkus.hibernate-orm.datasource), and the records' claims would go to the default "
                    + "one: keep the default unit on the default data source");
        }
    }

    /** The library's own persistence unit on the data source, or what to do where none can be made at run time. */
    private static EntityManagerFactory ownUnit(DataSource ds, boolean jta, GlobalSettings s) {
        try {
            return IdempotencyPersistenceUnit.create(ds, jta, s.jpaProperties());
        } catch (RuntimeException e) {
            throw new IdempotencyConfigurationException("The JPA store could not make its persistence unit on the data source ("
                    + e + "). Where units are fixed when the application is built (Quarkus), keep the records on the default "
                    + "data source (leave idempotency.datasource unset) and add Hibernate ORM to the application, so that its "
                    + "default unit holds the records' entity " + IdempotencyRecordEntity.class.getName(), e);
        }
    }

    /** The work, on this thread when it has no transaction, else on the managed executor's (which has none). */
    private <T> T outsideAnyTransaction(TransactionSynchronizationRegistryHolder tsr, java.util.function.Supplier<T> work) {
        if (tsr.registry() == null || tsr.registry().getTransactionKey() == null) {
            return work.get();
        }
        try {
            return java.util.concurrent.CompletableFuture.supplyAsync(work, executors.executor()).join();
        } catch (java.util.concurrent.CompletionException e) {
            if (e.getCause() instanceof RuntimeException r) {
                throw r;
            }
            throw e;
        }
    }

    /** Runs before the store closes (beans are destroyed in no set order): the last writes of those who use it. */
    void beforeStop(Runnable lastWrites) {
        beforeStop.add(lastWrites);
    }

    @PreDestroy
    synchronized void stop() {
        beforeStop.forEach(Runnable::run);
        beforeStop.clear();
        if (ownEmf != null && ownEmf.isOpen()) {
            ownEmf.close();
        }
        if (bounded != null) {
            bounded.close();
        }
    }
}
