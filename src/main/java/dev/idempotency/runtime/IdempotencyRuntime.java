package dev.idempotency.runtime;

import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.config.GlobalSettings;
import dev.idempotency.events.IdempotencyEvent;
import dev.idempotency.metrics.IdempotencyMetrics;
import dev.idempotency.cache.ManagedRecordCache;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.LocalCompletionSignals;
import dev.idempotency.core.StoreClock;
import dev.idempotency.core.TransactionBridge;
import dev.idempotency.spi.IdempotencyStore;
import dev.idempotency.spi.RecordCache;
import dev.idempotency.spi.ScopedKey;

import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.event.Startup;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Default;
import jakarta.enterprise.inject.Instance;
import jakarta.enterprise.inject.Produces;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.inject.Inject;


import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.logging.Level;
import java.util.logging.Logger;
import dev.idempotency.observability.OpenTelemetryPublisher;
import dev.idempotency.observability.Observability;
import dev.idempotency.observability.MicroProfileMetricsPublisher;

/**
 * Assembles the engine in a CDI container from the parts that each have a bean of their own (the store:
 * {@link StoreSelection}; the cache: {@link CacheSelection}; threads: {@link ManagedExecutors}; the purge:
 * {@link PurgeSchedule}; callers: {@link Callers}), with the clock, the transaction bridge, the codec and the
 * metrics. Started when the application starts, so that a store that cannot start fails the deployment.
 */
@ApplicationScoped
public class IdempotencyRuntime {

    private static final Logger LOG = Logger.getLogger(IdempotencyRuntime.class.getName());

    /** Looked up when first needed: on Quarkus this bean may be created before the run-time configuration is read. */
    @Inject
    Instance<IdempotencyDeployment> deploymentBean;

    private volatile IdempotencyDeployment deployment;

    @Inject
    @Any
    Instance<Object> beans;

    @Inject
    BeanManager beanManager;

    @Inject
    ManagedExecutors executors;

    @Inject
    StoreSelection storeSelection;

    @Inject
    CacheSelection cacheSelection;

    @Inject
    PurgeSchedule purgeSchedule;

    private volatile IdempotencyEngine engine;
    private final IdempotencyMetrics metrics = new IdempotencyMetrics();
    private ManagedRecordCache recordCache;
    private LocalCompletionSignals signals;
    private JsonCodec codec;
    private StoreClock storeClock;
    /** How often the store's clock is read again (the monotonic clock carries it in between). */
    private static final Duration STORE_CLOCK_RESYNC = Duration.ofSeconds(30);
    /** How often sightings answered from the cache reach the store ({@code IdempotencyManager.check}). */
    static final Duration SIGHTINGS_FLUSH = Duration.ofSeconds(1);
    /** How long a cache of this node's own answers a sighting at most. */
    static final Duration SIGHTING_CACHED_AT_MOST = Duration.ofSeconds(5);

    /**
     * Where the portable extension runs (Weld: every Jakarta EE server, Helidon MP), the engine starts as soon as the
     * application's scope begins, so that a store that cannot start fails the deployment. Elsewhere (Quarkus) this event
     * comes while the application is still being built, before its data sources exist: the engine starts on
     * {@link #onStartup} instead.
     */
    public void onStart(@Observes @Initialized(ApplicationScoped.class) Object event) {
        if (beans.select(EarlyStart.class).isResolvable()) {
            engine();
        }
    }

    /** The application has started, its data sources and transactions too: start the engine if it has not started. */
    public void onStartup(@Observes Startup event) {
        engine();
    }

    private volatile RequestEnd requestEnd;

    /**
     * The current request's {@link RequestEnd} (settles what a door left open when the request ends); {@code null} when
     * no request context is active on this thread, where there is nothing to end.
     */
    public RequestEnd requestEnd() {
        try {
            if (!beanManager.getContext(jakarta.enterprise.context.RequestScoped.class).isActive()) {
                return null;
            }
        } catch (jakarta.enterprise.context.ContextNotActiveException e) {
            return null;
        }
        RequestEnd r = requestEnd;
        if (r == null) {
            r = beans.select(RequestEnd.class).get(); // its client proxy: the same for every request
            requestEnd = r;
        }
        return r;
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

    public JsonCodec codec() {
        engine();
        return codec;
    }

    /** Purges expired records now (see {@link PurgeSchedule#purgeNow()}). */
    public int purgeNow() {
        engine();
        return purgeSchedule.purgeNow();
    }

    /** The global settings read at deployment. */
    public GlobalSettings settings() {
        return deployment().globalSettings();
    }

    /** What the deployment resolved: the configuration and every {@code @Idempotent} method's settings. */
    public IdempotencyDeployment deployment() {
        IdempotencyDeployment d = deployment;
        if (d == null) {
            d = deployment = deploymentBean.get();
        }
        return d;
    }

    /** A door's key as the engine, the store and the cache are to see it: {@link GlobalSettings#atRest}. */
    public ScopedKey atRest(ScopedKey key) {
        return settings().atRest(key);
    }

    /** The engine, for the doors to inject (each gets the one engine, started on first use). */
    @Produces
    IdempotencyEngine producedEngine() {
        return engine();
    }

    /** The library's counters and timers, for the application to read. */
    @Produces
    IdempotencyMetrics metrics() {
        return metrics;
    }

    /** MicroProfile Metrics, when the server provides it. */
    private Observability.Publisher metricsPublisher() {
        if (!Lookups.present("org.eclipse.microprofile.metrics.MetricRegistry")) {
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

    /** OpenTelemetry (MicroProfile Telemetry 2), when the server provides its {@code OpenTelemetry} bean. */
    private Observability.Publisher openTelemetry() {
        if (!Lookups.present("io.opentelemetry.api.OpenTelemetry")) {
            return null;
        }
        try {
            Instance<io.opentelemetry.api.OpenTelemetry> otel = beans.select(io.opentelemetry.api.OpenTelemetry.class, Default.Literal.INSTANCE);
            return otel.isResolvable() ? new OpenTelemetryPublisher(otel.get()) : null;
        } catch (RuntimeException | LinkageError e) {
            LOG.log(Level.FINE, "No OpenTelemetry", e);
            return null;
        }
    }

    /** The JTA registry ({@code TransactionSynchronizationRegistry}) when there is one, else {@code null}. */
    private volatile Object transactionRegistry;

    /** The JTA registry when there is one, else {@code null}: typed {@code Object}, so that no JTA class loads without JTA. */
    public Object transactionRegistry() {
        engine();
        return transactionRegistry;
    }

    private void start() {
        GlobalSettings s = settings();
        codec = new JsonCodec();
        TransactionSynchronizationRegistryHolder tsr = TransactionSynchronizationRegistryHolder.find(beans);
        transactionRegistry = tsr.registry();
        TransactionBridge bridge = tsr.bridge(beans);
        IdempotencyStore store = storeSelection.create(s, tsr);
        ExecutorService executor = executors.executor();
        Clock clock = Lookups.qualified(beans, Clock.class);
        if (clock == null) {
            // The store's clock, shared by every node; a Clock bean of the application's wins as it is.
            storeClock = new StoreClock(store, Clock.systemUTC()).start(executors.scheduler(), STORE_CLOCK_RESYNC);
            clock = storeClock;
        }
        signals = new LocalCompletionSignals();
        recordCache = cacheSelection.create(s, clock, signals);
        IdempotencyEngine started = new IdempotencyEngine(store, clock, s.nodeId(), bridge, signals, executor,
                s.lockTimeout().plusSeconds(5), recordCache == null ? RecordCache.NONE : recordCache);
        checkClaimModes(started);
        started.renewLeasesWith(executors.scheduler(), s.leaseRenewalLimit());
        started.lookAgainForWatchersWith(executors.scheduler(), executor);
        // IdempotencyManager.check's sightings: to the store once a second; a cache of this node's own (not shared
        // by the cluster) answers one for 5 s at most, after which the store answers with every node's sightings.
        boolean shared = recordCache != null && recordCache.shared();
        started.recordSightingsWith(executors.scheduler(), SIGHTINGS_FLUSH, shared ? null : SIGHTING_CACHED_AT_MOST);
        storeSelection.beforeStop(() -> lastSightings(started));
        java.util.List<Observability.Publisher> publishers = new java.util.ArrayList<>();
        Observability.Publisher mpMetrics = metricsPublisher();
        if (mpMetrics != null) {
            publishers.add(mpMetrics);
        }
        Observability.Publisher openTelemetry = openTelemetry();
        if (openTelemetry != null) {
            publishers.add(openTelemetry);
        }
        started.observer(new Observability(metrics, publishers, (Observability.Trace) openTelemetry, beanManager.getEvent().select(IdempotencyEvent.class), clock));
        java.util.Map<dev.idempotency.config.MethodSettings, dev.idempotency.core.ClaimFlow> chosen = new java.util.IdentityHashMap<>();
        deployment().allSettings().forEach(m -> chosen.put(m, chooseFlow(started, m)));
        flows = chosen;
        engine = started;
        purgeSchedule.start(started);
        LOG.log(Level.INFO, "Idempotency started on node {0} with {1} and {2}", new Object[] {s.nodeId(),
                store.getClass().getSimpleName(), recordCache == null ? "no cache" : recordCache.description()});
    }

    /**
     * {@code claim = ATOMIC} or {@code OPTIMISTIC} where it cannot work fails the deployment, naming the methods and the
     * fix; where it cannot work because the data source does not share a transaction's connection, the methods that leave
     * the claim to its default are served with leased claims, and a WARNING says why.
     */
    private void checkClaimModes(IdempotencyEngine engine) {
        String connections = storeSelection.connectionProblem();
        if (connections != null) {
            java.util.List<String> asked = deployment().allSettings().stream()
                    .filter(m -> m.enabled() && (m.claim() == dev.idempotency.ClaimMode.ATOMIC || m.claim() == dev.idempotency.ClaimMode.OPTIMISTIC))
                    .map(dev.idempotency.config.MethodSettings::describe).sorted().toList();
            if (!asked.isEmpty()) {
                throw new IdempotencyConfigurationException("@Idempotent methods " + asked + " ask for claim ATOMIC or OPTIMISTIC, but "
                        + connections + "; or use claim = ClaimMode.LEASED");
            }
            if (engine.supportsAtomicClaims()) {
                LOG.log(Level.WARNING, "Claims are leased, not atomic, unless asked for: {0}", connections);
            }
            return;
        }
        if (engine.supportsAtomicClaims(true)) {
            return;
        }
        boolean calls = engine.supportsAtomicClaims();
        java.util.List<String> atomic = deployment().allSettings().stream()
                .filter(m -> m.enabled() && (m.claim() == dev.idempotency.ClaimMode.ATOMIC || m.claim() == dev.idempotency.ClaimMode.OPTIMISTIC))
                .filter(m -> !calls || m.keySource() == dev.idempotency.config.KeySource.HTTP_HEADER)
                .map(dev.idempotency.config.MethodSettings::describe).sorted().toList();
        if (!atomic.isEmpty()) {
            throw new IdempotencyConfigurationException("@Idempotent methods " + atomic + " ask for claim ATOMIC or OPTIMISTIC, but "
                    + (calls ? "no UserTransaction can begin a transaction on a request's thread"
                    : engine.store() instanceof dev.idempotency.spi.AtomicClaims ? "there is no JTA transaction manager"
                    : "the store " + engine.store().getClass().getName() + " cannot claim inside a transaction")
                    + ": use claim = ClaimMode.LEASED (or leave claim to its default), or run where JTA is present");
        }
    }

    /**
     * Whether atomic and optimistic claims work here: {@link IdempotencyEngine#supportsAtomicClaims(boolean)}, and a data
     * source that shares a transaction's connection (checked when the store started).
     */
    public boolean atomicClaims(IdempotencyEngine engine, boolean onThread) {
        return storeSelection.connectionProblem() == null && engine.supportsAtomicClaims(onThread);
    }

    /** Why {@link #atomicClaims} is false because of the data source, naming the fix; else {@code null}. */
    public String connectionProblem() {
        return storeSelection.connectionProblem();
    }

    /** The flow of each method, chosen once when the engine starts ({@link #flow}). */
    private volatile java.util.Map<dev.idempotency.config.MethodSettings, dev.idempotency.core.ClaimFlow> flows = java.util.Map.of();

    /** How calls of this method claim their keys: chosen when the application started ({@link #chooseFlow}). */
    public dev.idempotency.core.ClaimFlow flow(dev.idempotency.config.MethodSettings m) {
        dev.idempotency.core.ClaimFlow flow = flows.get(m);
        return flow != null ? flow : chooseFlow(engine(), m);
    }

    /**
     * The one place where a method's claim is chosen: atomic when it asks for it, or by default where atomic claims work
     * (a transaction manager, a store that claims inside transactions, and, for a resource method, a transaction that can
     * begin on the request's thread) and it does not return a {@code CompletionStage}; else leased.
     */
    private dev.idempotency.core.ClaimFlow chooseFlow(IdempotencyEngine engine, dev.idempotency.config.MethodSettings m) {
        boolean onThread = m.keySource() == dev.idempotency.config.KeySource.HTTP_HEADER;
        if (m.claim() != dev.idempotency.ClaimMode.DEFAULT) {
            return engine.flow(m.claim());
        }
        return engine.flow(!m.async() && atomicClaims(engine, onThread)
                ? dev.idempotency.ClaimMode.ATOMIC : dev.idempotency.ClaimMode.LEASED);
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
    public ManagedRecordCache recordCache() {
        engine();
        return recordCache;
    }

    /** Writes the sightings still queued and stops the schedule (at shutdown, before the store closes). */
    private static void lastSightings(IdempotencyEngine engine) {
        try {
            engine.recordSightingsWith(null, SIGHTINGS_FLUSH, null);
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "Could not record the last sightings at shutdown", e);
        }
    }

    @PreDestroy
    void stop() {
        if (engine != null) {
            engine.renewLeasesWith(null, Duration.ZERO);
            engine.lookAgainForWatchersWith(null, null);
            lastSightings(engine);
        }
        if (storeClock != null) {
            storeClock.stop();
        }
        if (codec != null) {
            try {
                codec.close();
            } catch (Exception e) {
                LOG.log(Level.FINE, "Closing JSON-B", e);
            }
        }
    }



}
