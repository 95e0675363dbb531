package dev.idempotency.store.jpa;

import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.PersistenceException;
import jakarta.persistence.SharedCacheMode;
import jakarta.persistence.ValidationMode;
import jakarta.persistence.spi.ClassTransformer;
import jakarta.persistence.spi.PersistenceProvider;
import jakarta.persistence.spi.PersistenceProviderResolverHolder;
import jakarta.persistence.spi.PersistenceUnitInfo;
import jakarta.persistence.spi.PersistenceUnitTransactionType;

import javax.sql.DataSource;
import java.net.URL;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * The library's own persistence unit {@code idempotency}: one entity, on a data source, bootstrapped
 * through the provider's container SPI. It is built in code rather than declared in a
 * {@code META-INF/persistence.xml}, so that an application's own unit stays its only one (an unnamed
 * {@code @PersistenceContext} keeps working).
 */
public final class IdempotencyPersistenceUnit implements PersistenceUnitInfo {

    public static final String NAME = "idempotency";

    private final DataSource dataSource;
    private final boolean jta;
    private final Properties properties = new Properties();
    private final ClassLoader classLoader = IdempotencyRecordEntity.class.getClassLoader();

    private IdempotencyPersistenceUnit(DataSource dataSource, boolean jta, Map<String, String> properties) {
        this.dataSource = dataSource;
        this.jta = jta;
        this.properties.putAll(properties);
    }

    /**
     * Creates the entity manager factory of the library's unit.
     *
     * @param dataSource the data source (JTA-enlisting when {@code jta})
     * @param jta        whether the unit takes part in JTA transactions
     * @param properties provider properties ({@code idempotency.jpa.*} with the prefix removed)
     */
    public static EntityManagerFactory create(DataSource dataSource, boolean jta, Map<String, String> properties) {
        IdempotencyPersistenceUnit unit = new IdempotencyPersistenceUnit(dataSource, jta, properties);
        List<PersistenceProvider> providers = PersistenceProviderResolverHolder.getPersistenceProviderResolver().getPersistenceProviders();
        String wanted = properties.get("jakarta.persistence.provider");
        for (PersistenceProvider provider : providers) {
            if (wanted == null || provider.getClass().getName().equals(wanted)) {
                Map<String, Object> map = new HashMap<>(properties);
                EntityManagerFactory emf = provider.createContainerEntityManagerFactory(unit, map);
                if (emf != null) {
                    return emf;
                }
            }
        }
        throw new PersistenceException("No JPA provider" + (wanted == null ? "" : " " + wanted)
                + " could create the '" + NAME + "' persistence unit (providers found: " + providers + ")");
    }

    @Override
    public String getPersistenceUnitName() {
        return NAME;
    }

    @Override
    public String getPersistenceProviderClassName() {
        return properties.getProperty("jakarta.persistence.provider");
    }

    @Override
    public PersistenceUnitTransactionType getTransactionType() {
        return jta ? PersistenceUnitTransactionType.JTA : PersistenceUnitTransactionType.RESOURCE_LOCAL;
    }

    @Override
    public DataSource getJtaDataSource() {
        return jta ? dataSource : null;
    }

    @Override
    public DataSource getNonJtaDataSource() {
        return jta ? null : dataSource;
    }

    @Override
    public List<String> getMappingFileNames() {
        return List.of();
    }

    @Override
    public List<URL> getJarFileUrls() {
        return List.of();
    }

    @Override
    public URL getPersistenceUnitRootUrl() {
        return IdempotencyRecordEntity.class.getProtectionDomain().getCodeSource() == null
                ? null
                : IdempotencyRecordEntity.class.getProtectionDomain().getCodeSource().getLocation();
    }

    @Override
    public List<String> getManagedClassNames() {
        return List.of(IdempotencyRecordEntity.class.getName());
    }

    @Override
    public boolean excludeUnlistedClasses() {
        return true;
    }

    @Override
    public SharedCacheMode getSharedCacheMode() {
        return SharedCacheMode.NONE;
    }

    @Override
    public ValidationMode getValidationMode() {
        return ValidationMode.NONE;
    }

    @Override
    public Properties getProperties() {
        return properties;
    }

    @Override
    public String getPersistenceXMLSchemaVersion() {
        return "3.0";
    }

    @Override
    public ClassLoader getClassLoader() {
        return classLoader;
    }

    @Override
    public void addTransformer(ClassTransformer transformer) {
        // No weaving: the entity has no lazy associations.
    }

    @Override
    public ClassLoader getNewTempClassLoader() {
        return classLoader;
    }
}
