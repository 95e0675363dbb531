package dev.idempotency.adapter.helidon;

import dev.idempotency.ForIdempotency;
import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.runtime.JtaSupport;
import dev.idempotency.runtime.Lookups;

import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Default;
import jakarta.enterprise.inject.literal.NamedLiteral;
import jakarta.enterprise.inject.spi.AfterBeanDiscovery;
import jakarta.enterprise.inject.spi.Bean;
import jakarta.enterprise.inject.spi.BeanManager;
import jakarta.transaction.TransactionManager;
import jakarta.transaction.TransactionSynchronizationRegistry;

import javax.sql.DataSource;
import java.lang.annotation.Annotation;
import java.lang.reflect.Proxy;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Helidon MP's data sources are plain pools: a connection taken inside {@code @Transactional} does not join the
 * transaction, and its JPA units enlist one connection per entity manager. Where the library keeps the records on such
 * a pool, it enlists the pool's connections itself, one per transaction ({@link TransactionBoundDataSource}), and
 * gives that same connection to
 * <ul>
 *   <li>the store and the application's JDBC: the {@code @ForIdempotency DataSource} bean;</li>
 *   <li>the application's JTA persistence units on that pool: an alternative to Helidon's own provider of their data
 *   sources (a unit on another pool gets that pool's connections the same way, one per transaction).</li>
 * </ul>
 * So an atomic claim and the application's writes, in JDBC or JPA, commit or roll back together on one connection, as
 * on a Jakarta EE server.
 */
public final class HelidonDataSources {

    /** Helidon's provider of the data sources of its JPA units. */
    static final String UNIT_DATA_SOURCES = "io.helidon.integrations.cdi.jpa.PersistenceUnitInfoBean$DataSourceProvider";

    /** One enlisting data source per pool bean, shared by the records and the units. */
    private final Map<Bean<?>, TransactionBoundDataSource> enlisted = new ConcurrentHashMap<>();
    /** The records' pool: its qualifier, and what to call it. */
    private volatile Annotation records;
    private volatile String recordsWhich;
    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger(HelidonDataSources.class.getName());

    /** Whether this is such a runtime: JTA and Helidon's JTA adapter for JDBC, and no JNDI. */
    public static boolean applies() {
        return JtaSupport.isAvailable() && TransactionBoundDataSource.adapterPresent() && !Lookups.jndiPresent();
    }

    /**
     * Adds the {@code @ForIdempotency DataSource} bean over the records' pool ({@code idempotency.datasource}'s bean, or
     * the default one), and the units' data sources over theirs.
     */
    public void register(AfterBeanDiscovery abd, BeanManager bm, String recordsDataSource, boolean byDefault) {
        Annotation records = byDefault ? Default.Literal.INSTANCE : NamedLiteral.of(recordsDataSource);
        String which = byDefault ? "the default DataSource bean (with more than one, name the records' one with idempotency.datasource)"
                : "the DataSource bean @Named(\"" + recordsDataSource + "\") (idempotency.datasource)";
        this.records = records;
        this.recordsWhich = which;
        abd.addBean().types(DataSource.class, Object.class).qualifiers(ForIdempotency.Literal.INSTANCE, Any.Literal.INSTANCE)
                .scope(jakarta.enterprise.context.ApplicationScoped.class).beanClass(TransactionBoundDataSource.class)
                .produceWith(beans -> enlisted(bm, records, which));
        Class<?> unitDataSources;
        try {
            unitDataSources = Class.forName(UNIT_DATA_SOURCES, false, HelidonDataSources.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return; // no Helidon JPA
        }
        // before the application's own alternatives (Interceptor.Priority.APPLICATION and up), which still win
        abd.addBean().types(unitDataSources, Object.class).qualifiers(Default.Literal.INSTANCE, Any.Literal.INSTANCE)
                .scope(jakarta.inject.Singleton.class).beanClass(HelidonDataSources.class)
                .alternative(true).priority(jakarta.interceptor.Interceptor.Priority.LIBRARY_BEFORE)
                .produceWith(beans -> Proxy.newProxyInstance(unitDataSources.getClassLoader(), new Class<?>[] {unitDataSources},
                        (proxy, method, args) -> switch (method.getName()) {
                            case "getDataSource" -> unitDataSource(bm, (Boolean) args[0], (Boolean) args[1], (String) args[2]);
                            case "hashCode" -> System.identityHashCode(proxy);
                            case "equals" -> proxy == args[0];
                            case "toString" -> "the library's data sources of Helidon's JPA units: one connection per transaction";
                            default -> throw new UnsupportedOperationException(method.getName());
                        }));
    }

    /** As Helidon's own provider answers, with a JTA unit's pool enlisted one connection per transaction. */
    private DataSource unitDataSource(BeanManager bm, boolean jta, boolean useDefaultJta, String name) {
        if (!jta) {
            return name == null ? null : pool(bm, NamedLiteral.of(name), "the DataSource bean @Named(\"" + name + "\")");
        }
        if (name == null && !useDefaultJta) {
            return null;
        }
        Annotation qualifier = name == null ? Default.Literal.INSTANCE : NamedLiteral.of(name);
        String which = name == null ? "the default DataSource bean" : "the DataSource bean @Named(\"" + name + "\")";
        Bean<?> recordsPool = recordsPool(bm);
        if (recordsPool != null && poolBean(bm, qualifier, which) != recordsPool) {
            // two pools in one transaction: Helidon's adapter commits each connection on its own, one after the other
            LOG.warning("A JPA unit writes on " + which + ", not on the records' data source: its writes commit apart from "
                    + "the atomic and optimistic claims of the same transaction (a crash or a failed commit between the two "
                    + "would keep one without the other). Keep the unit on the records' data source (idempotency.datasource)");
        }
        return enlisted(bm, qualifier, which);
    }

    /**
     * The records' pool bean, or {@code null} where the library resolves none (no default bean, or more than one): then
     * it does not warn.
     */
    private Bean<?> recordsPool(BeanManager bm) {
        try {
            return bm.resolve(bm.getBeans(DataSource.class, records));
        } catch (RuntimeException e) {
            return null;
        }
    }

    private TransactionBoundDataSource enlisted(BeanManager bm, Annotation qualifier, String which) {
        Bean<?> bean = poolBean(bm, qualifier, which);
        return enlisted.computeIfAbsent(bean, b -> TransactionBoundDataSource.over(reference(bm, b),
                bm.createInstance().select(TransactionManager.class).get(),
                bm.createInstance().select(TransactionSynchronizationRegistry.class).get()));
    }

    private static DataSource pool(BeanManager bm, Annotation qualifier, String which) {
        return reference(bm, poolBean(bm, qualifier, which));
    }

    private static Bean<?> poolBean(BeanManager bm, Annotation qualifier, String which) {
        Bean<?> bean;
        try {
            bean = bm.resolve(bm.getBeans(DataSource.class, qualifier));
        } catch (jakarta.enterprise.inject.AmbiguousResolutionException e) {
            throw new IdempotencyConfigurationException("More than one data source answers to " + which, e);
        }
        if (bean == null) {
            throw new IdempotencyConfigurationException("There is no data source: no " + which);
        }
        return bean;
    }

    private static DataSource reference(BeanManager bm, Bean<?> bean) {
        return (DataSource) bm.getReference(bean, DataSource.class, bm.createCreationalContext(bean));
    }
}
