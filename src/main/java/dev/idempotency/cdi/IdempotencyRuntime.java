package dev.idempotency.cdi;

import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.config.GlobalSettings;
import dev.idempotency.events.IdempotencyEvent;
import dev.idempotency.metrics.IdempotencyMetrics;
import dev.idempotency.cache.CacheManagers;
import dev.idempotency.cache.InfinispanRecordCache;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.StoreClock;
import dev.idempotency.core.TransactionBridge;
import dev.idempotency.ForIdempotency;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.store.jpa.IdempotencyPersistenceUnit;
import dev.idempotency.store.jpa.JpaIdempotencyStore;
import dev.idempotency.store.jpa.JpaSchema;
import dev.idempotency.store.jpa.JpaTransactions;
import dev.idempotency.store.jpa.JtaTransactions;
import dev.idempotency.store.jpa.ResourceLocalTransactions;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Default;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.enterprise.util.TypeLiteral;
import jakarta.inject.Inject;
import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.Persistence;

import org.infinispan.Cache;
import org.infinispan.manager.EmbeddedCacheManager;

import javax.naming.InitialContext;
import javax.naming.NamingException;
import javax.sql.DataSource;
import java.security.Principal;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The library's running parts in a CDI container: the store (the application's own
 * {@link IdempotencyStore} bean, else the in-memory or the JPA store by configuration), the engine, the
 * codec and the purge schedule. Started when the application starts, so that a store that cannot start
 * fails the deployment.
 */
@ApplicationScoped
public class IdempotencyRuntime {

    private static final Logger LOG = Logger.getLogger(IdempotencyRuntime.class.getName());

    @Inject
    IdempotencyExtension extension;

    @Inject
    @Any
    Instance<Object> beans;

    @Inject
    BeanManager beanManager;

    private volatile IdempotencyEngine engine;
    private final IdempotencyMetrics metrics = new IdempotencyMetrics();
    private volatile Instance<Principal> principal;
    private InfinispanRecordCache recordCache;
    private LocalCompletionSignals signals;
    private EmbeddedCacheManager ownCacheManager;
    private JsonCodec codec;
    private EntityManagerFactory ownEmf;
    private ScheduledExecutorService ownScheduler;
    private ScheduledExecutorService scheduler;
    private StoreClock storeClock;
    /** How often the store's clock is read again (the monotonic clock carries it in between). */
    private static final Duration STORE_CLOCK_RESYNC = Duration.ofSeconds(30);
    private ExecutorService ownExecutor;
    private ExecutorService executor;
    private ScheduledFuture<?> purge;

    void onStart(@Observes @Initialized(ApplicationScoped.class) Object event) {
        engine();
    }

    /** The engine, started on first use. */
    public IdempotencyEngine engine() {
        IdempotencyEngine e = engine;
        if (e == null) {
            synchronized (this) {
                if (engine == null) {
                    start();
                }
                e = engine;
            }
        }
        return e;
    }

    JsonCodec codec() {
        engine();
        return codec;
    }

    /** The global settings read at deployment. */
    public GlobalSettings settings() {
        return extension.globalSettings();
    }

    /** The caller's name, {@code "anonymous"} when unauthenticated, {@code ""} when keys are not scoped per caller. */
    String principalName() {
        return principalName(settings().scopeByPrincipal());
    }

    /**
     * The caller's name (the CDI {@code Principal}), {@code "anonymous"} when unauthenticated, {@code ""} when not
     * {@code scoped}.
     */
    public String principalName(boolean scoped) {
        if (!scoped) {
            return "";
        }
        String name = null;
        Instance<Principal> principal = this.principal;
        if (principal != null) {
            try {
                Principal p = principal.get(); // the container's proxy: asking its name may fail outside a request
                name = p == null ? null : p.getName();
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "No principal available", e);
            }
        }
        String caller = name;
        return dev.idempotency.spi.ScopedKey.principalOf(caller == null ? null : () -> caller, true);
    }


    /** The management policy of each purge run: the application's bean, else idempotency.manager.policy. */
    private void applyPolicy() {
        Instance<dev.idempotency.spi.ManagementPolicy> own = beans.select(dev.idempotency.spi.ManagementPolicy.class, Default.Literal.INSTANCE);
        dev.idempotency.IdempotencyManager manager = beans.select(dev.idempotency.IdempotencyManager.class, Default.Literal.INSTANCE).get();
        if (own.isResolvable()) {
            own.get().apply(manager);
            return;
        }
        switch (settings().managerPolicy()) {
            case "age" -> manager.clearOlderThan(settings().managerMaxAge());
            case "size" -> manager.trimTo(settings().managerMaxRecords());
            default -> {
            }
        }
    }

    /** The library's counters and timers, for the application to read. */
    @Produces
    IdempotencyMetrics metrics() {
        return metrics;
    }

    /** MicroProfile Metrics, when the server provides it. */
    private Observability.Publisher metricsPublisher() {
        if (!IdempotencyExtension.present("org.eclipse.microprofile.metrics.MetricRegistry")) {
            return null;
        }
        try {
            Instance<org.eclipse.microprofile.metrics.MetricRegistry> registry = beans.select(
                    org.eclipse.microprofile.metrics.MetricRegistry.class, Default.Literal.INSTANCE);
            return registry.isResolvable() ? new MicroProfileMetricsPublisher(registry.get()) : null;
        } catch (RuntimeException | LinkageError e) {
            LOG.log(Level.FINE, "No MicroProfile Metrics", e);
            return null;
        }
    }

    /** Purges expired records now, batch by batch; returns how many it deleted. */
    public int purgeNow() {
        IdempotencyEngine e = engine();
        int batch = settings().purgeBatchSize();
        int total = 0;
        for (int round = 0; round < 100; round++) {
            int n = e.store().purgeExpired(e.clock().instant(), batch);
            total += n;
            if (n < batch) {
                break;
            }
        }
        if (total > 0) {
            LOG.log(Level.FINE, "Purged {0} expired records", total);
        }
        applyPolicy();
        return total;
    }

    private void start() {
        GlobalSettings s = settings();
        Instance<Principal> p = beans.select(Principal.class, Default.Literal.INSTANCE);
        principal = p.isResolvable() ? p : null;
        codec = new JsonCodec();
        TransactionSynchronizationRegistryHolder tsr = TransactionSynchronizationRegistryHolder.find(beans);
        TransactionBridge bridge = tsr.bridge(beans);
        IdempotencyStore store = createStore(s, tsr);
        ExecutorService executor = executor();
        Clock clock = qualified(Clock.class);
        if (clock == null) {
            // The store's clock, shared by every node (SPEC L2); a Clock bean of the application's wins as it is.
            storeClock = new StoreClock(store, Clock.systemUTC()).start(scheduler(), STORE_CLOCK_RESYNC);
            clock = storeClock;
        }
        signals = new LocalCompletionSignals();
        recordCache = createCache(s, clock, signals);
        IdempotencyEngine started = new IdempotencyEngine(store, clock, s.nodeId(), bridge, signals, executor,
                s.lockTimeout().plusSeconds(5), recordCache == null ? RecordCache.NONE : recordCache);
        checkClaimModes(started);
        started.renewLeasesWith(scheduler(), s.leaseRenewalLimit());
        started.observer(new Observability(metrics, metricsPublisher(), beanManager.getEvent().select(IdempotencyEvent.class), clock));
        engine = started;
        schedulePurge(s);
        LOG.log(Level.INFO, "Idempotency started on node {0} with {1} and {2}", new Object[] {s.nodeId(),
                store.getClass().getSimpleName(), recordCache == null ? "no cache" : "an Infinispan cache ("
                + (recordCache.cache().getCacheManager().getCacheManagerConfiguration().isClustered() ? "clustered" : "local") + ")"});
    }

    /** {@code claim = ATOMIC} where it cannot work fails the deployment, naming the methods and the fix (SPEC A5). */
    private void checkClaimModes(IdempotencyEngine engine) {
        if (engine.supportsAtomicClaims(true)) {
            return;
        }
        boolean calls = engine.supportsAtomicClaims();
        java.util.List<String> atomic = extension.allSettings().stream()
                .filter(m -> m.enabled() && m.claim() == dev.idempotency.ClaimMode.ATOMIC)
                .filter(m -> !calls || m.keySource() == dev.idempotency.config.KeySource.HTTP_HEADER)
                .map(dev.idempotency.config.MethodSettings::describe).sorted().toList();
        if (!atomic.isEmpty()) {
            throw new IdempotencyConfigurationException("@Idempotent methods " + atomic + " ask for claim ATOMIC, but "
                    + (calls ? "no UserTransaction can begin a transaction on a request's thread"
                    : engine.store() instanceof dev.idempotency.spi.AtomicClaims ? "there is no JTA transaction manager"
                    : "the store " + engine.store().getClass().getName() + " cannot claim inside a transaction")
                    + ": use claim = ClaimMode.LEASED (or leave claim to its default), or run where JTA is present");
        }
    }

    /** Whether calls of this method claim atomically (its setting, or the default where atomic claims work). */
    public boolean atomic(dev.idempotency.config.MethodSettings m) {
        return m.claim() == dev.idempotency.ClaimMode.ATOMIC
                || m.claim() == dev.idempotency.ClaimMode.DEFAULT && !m.async() && engine().supportsAtomicClaims();
    }

    /** Whether requests to this resource method claim atomically: as {@link #atomic}, and a transaction can be begun on the request's thread. */
    public boolean atomicHttp(dev.idempotency.config.MethodSettings m) {
        return atomic(m) && engine().supportsAtomicClaims(true);
    }

    /** The application's cache or cache manager (qualified {@code @ForIdempotency}), else one of our own. */
    private InfinispanRecordCache createCache(GlobalSettings s, Clock clock, LocalCompletionSignals signals) {
        Instance<Cache<String, byte[]>> own = beans.select(new TypeLiteral<Cache<String, byte[]>>() { }, ForIdempotency.Literal.INSTANCE);
        if (own.isResolvable()) {
            return new InfinispanRecordCache(own.get(), clock, signals);
        }
        EmbeddedCacheManager manager = qualified(EmbeddedCacheManager.class);
        if (manager == null) {
            if (s.cacheMode().equals("none")) {
                return null;
            }
            manager = ownCacheManager = CacheManagers.start(s.cacheMode().equals("cluster"), s.clusterName(), s.nodeId(),
                    s.jgroupsStack().isEmpty() ? null : s.jgroupsStack(), s.bindAddress(), s.bindPort(), s.initialHosts(),
                    s.cacheMaxEntries());
        }
        return new InfinispanRecordCache(CacheManagers.defineCache(manager, s.cacheMaxEntries()), clock, signals);
    }

    /** The cache in front of the store, or {@link RecordCache#NONE}. */
    public RecordCache recordCacheOrNone() {
        engine();
        return recordCache == null ? RecordCache.NONE : recordCache;
    }

    /** Wakes waiters of this node (the cache's events wake those of the others). */
    public LocalCompletionSignals signals() {
        engine();
        return signals;
    }

    /** The cache in front of the store, or {@code null} when there is none. */
    public InfinispanRecordCache recordCache() {
        engine();
        return recordCache;
    }

    private IdempotencyStore createStore(GlobalSettings s, TransactionSynchronizationRegistryHolder tsr) {
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
        EntityManagerFactory emf = qualified(EntityManagerFactory.class);
        JpaIdempotencyStore.InsertIfAbsent insertIfAbsent = JpaIdempotencyStore.InsertIfAbsent.PORTABLE;
        if (emf == null && !s.persistenceUnit().isEmpty()) {
            emf = ownEmf = Persistence.createEntityManagerFactory(s.persistenceUnit(), s.jpaProperties());
        }
        if (emf == null) {
            DataSource ds = qualified(DataSource.class);
            if (ds == null) {
                ds = lookup(s.datasource(), DataSource.class);
            }
            if (ds == null) {
                throw new IdempotencyConfigurationException("The JPA store has no database: no @ForIdempotency DataSource or "
                        + "EntityManagerFactory bean, no idempotency.persistence-unit, and no data source at " + s.datasource()
                        + ". Set one of those, or idempotency.store=memory");
            }
            if (s.schema().equals("create")) {
                if (JpaSchema.createIfMissing(ds)) {
                    LOG.log(Level.INFO, "Created the table {0}", JpaSchema.TABLE);
                }
            }
            insertIfAbsent = JpaSchema.insertIfAbsent(ds);
            emf = ownEmf = IdempotencyPersistenceUnit.create(ds, tsr.registry() != null, s.jpaProperties());
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
            transactions = new JtaTransactions(emf, tsr.registry(), requiresNew, executor());
        } else {
            transactions = new ResourceLocalTransactions(emf);
        }
        return new JpaIdempotencyStore(transactions, s.lockTimeout(), insertIfAbsent);
    }

    /** The server's managed executor (naming and class loader context come along), else a pool of our own. */
    private synchronized ExecutorService executor() {
        if (executor == null) {
            executor = lookup("java:comp/DefaultManagedExecutorService", ExecutorService.class);
            if (executor == null) {
                executor = ownExecutor = Executors.newCachedThreadPool(daemon("idempotency-store"));
            }
        }
        return executor;
    }

    /** The server's managed scheduler (the purge and the lease heartbeats), else one of our own. */
    private synchronized ScheduledExecutorService scheduler() {
        if (scheduler == null) {
            scheduler = lookup("java:comp/DefaultManagedScheduledExecutorService", ScheduledExecutorService.class);
            if (scheduler == null) {
                ScheduledThreadPoolExecutor own = new ScheduledThreadPoolExecutor(1, daemon("idempotency-scheduler"));
                own.setRemoveOnCancelPolicy(true); // a cancelled heartbeat leaves no task behind
                scheduler = ownScheduler = own;
            }
        }
        return scheduler;
    }

    private void schedulePurge(GlobalSettings s) {
        ScheduledExecutorService scheduler = scheduler();
        long period = s.purgeInterval().toMillis();
        purge = scheduler.scheduleWithFixedDelay(() -> {
            try {
                purgeNow();
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "Purging expired idempotency records failed; will try again in " + s.purgeInterval(), e);
            }
        }, period, period, TimeUnit.MILLISECONDS);
    }

    @PreDestroy
    void stop() {
        if (purge != null) {
            purge.cancel(false);
        }
        if (engine != null) {
            engine.renewLeasesWith(null, Duration.ZERO);
        }
        if (storeClock != null) {
            storeClock.stop();
        }
        if (ownScheduler != null) {
            ownScheduler.shutdownNow();
        }
        if (ownExecutor != null) {
            ownExecutor.shutdown();
        }
        if (recordCache != null) {
            recordCache.close();
        }
        if (ownCacheManager != null) {
            ownCacheManager.stop();
        }
        if (ownEmf != null && ownEmf.isOpen()) {
            ownEmf.close();
        }
        if (codec != null) {
            try {
                codec.close();
            } catch (Exception e) {
                LOG.log(Level.FINE, "Closing JSON-B", e);
            }
        }
    }

    private <T> T qualified(Class<T> type) {
        Instance<T> i = beans.select(type, ForIdempotency.Literal.INSTANCE);
        return i.isResolvable() ? i.get() : null;
    }

    static <T> T lookup(String jndiName, Class<T> type) {
        try {
            Object o = new InitialContext().lookup(jndiName);
            return type.isInstance(o) ? type.cast(o) : null;
        } catch (NamingException | RuntimeException e) {
            return null;
        }
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    /** The JTA registry when there is one (bean or JNDI), kept apart so that no JTA class loads without JTA. */
    record TransactionSynchronizationRegistryHolder(jakarta.transaction.TransactionSynchronizationRegistry registry) {
        static TransactionSynchronizationRegistryHolder find(Instance<Object> beans) {
            if (!JtaSupport.isAvailable()) {
                return new TransactionSynchronizationRegistryHolder(null);
            }
            Instance<jakarta.transaction.TransactionSynchronizationRegistry> bean =
                    beans.select(jakarta.transaction.TransactionSynchronizationRegistry.class, Default.Literal.INSTANCE);
            if (bean.isResolvable()) {
                return new TransactionSynchronizationRegistryHolder(bean.get());
            }
            return new TransactionSynchronizationRegistryHolder(
                    lookup("java:comp/TransactionSynchronizationRegistry", jakarta.transaction.TransactionSynchronizationRegistry.class));
        }

        TransactionBridge bridge(Instance<Object> beans) {
            if (registry == null) {
                return TransactionBridge.NONE;
            }
            JtaSupport.RequiredBean required = beans.select(JtaSupport.RequiredBean.class).get();
            try {
                if (required.required(registry::getTransactionKey) == null) {
                    LOG.log(Level.WARNING, "No container interceptor for @Transactional applies to the library's beans: "
                            + "claims are leased");
                    return new dev.idempotency.jta.JtaTransactionBridge(registry);
                }
            } catch (Exception e) {
                throw new IdempotencyConfigurationException("Could not begin a JTA transaction: " + e, e);
            }
            jakarta.transaction.UserTransaction ut = userTransaction(beans);
            LOG.log(Level.FINE, "JTA: atomic claims {0}", ut == null ? "around calls only" : "around calls and HTTP requests");
            return new dev.idempotency.jta.JtaTransactionBridge(registry, required, ut);
        }

        /**
         * The container's UserTransaction (JNDI, else the built-in bean), for doors that begin on a thread. JNDI
         * first, looked up once: Weld's built-in bean looks the object up in JNDI again on every call (Payara: a
         * new InitialContext per begin, getStatus and commit, 7 % of an HTTP request's CPU).
         */
        private static jakarta.transaction.UserTransaction userTransaction(Instance<Object> beans) {
            jakarta.transaction.UserTransaction ut = lookup("java:comp/UserTransaction", jakarta.transaction.UserTransaction.class);
            if (ut != null) {
                return ut;
            }
            try {
                Instance<jakarta.transaction.UserTransaction> bean = beans.select(jakarta.transaction.UserTransaction.class);
                if (bean.isResolvable()) {
                    return bean.get();
                }
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "No UserTransaction bean", e);
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
}
