package dev.idempotency.bench;

import jakarta.persistence.EntityManagerFactory;
import jakarta.persistence.SharedCacheMode;
import jakarta.persistence.ValidationMode;
import jakarta.persistence.spi.ClassTransformer;
import jakarta.persistence.spi.PersistenceUnitInfo;
import jakarta.persistence.spi.PersistenceUnitTransactionType;

import org.apache.camel.processor.idempotent.jpa.JpaMessageIdRepository;
import org.apache.camel.processor.idempotent.jpa.MessageProcessed;
import org.hibernate.jpa.HibernatePersistenceProvider;

import javax.sql.DataSource;
import java.net.URL;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * The peers a Java user would pick instead: Apache Camel's idempotent repositories. {@link #jpa} builds
 * {@code camel-jpa}'s {@link JpaMessageIdRepository} the way Camel's documentation sets it up outside Spring XML:
 * an entity manager factory holding Camel's {@link MessageProcessed} entity (Hibernate creates its table and
 * sequence), Camel's default transaction strategy (Spring's {@code JpaTransactionManager}) and Spring's shared
 * entity manager.
 */
final class CamelPeers {

    private CamelPeers() {
    }

    static EntityManagerFactory messageProcessedUnit(DataSource dataSource) {
        return new HibernatePersistenceProvider().createContainerEntityManagerFactory(new Unit(dataSource),
                Map.of("hibernate.hbm2ddl.auto", "create-drop", "hibernate.show_sql", "false",
                        "hibernate.connection.provider_disables_autocommit", "true"));
    }

    static JpaMessageIdRepository jpa(EntityManagerFactory emf, String processorName) {
        JpaMessageIdRepository repository = new JpaMessageIdRepository(emf, processorName);
        repository.setSharedEntityManager(true);
        repository.setJoinTransaction(false);
        repository.start();
        return repository;
    }

    /** Camel's entity alone, resource-local, on the given data source. */
    private record Unit(DataSource dataSource) implements PersistenceUnitInfo {
        @Override
        public String getPersistenceUnitName() {
            return "camel";
        }

        @Override
        public String getPersistenceProviderClassName() {
            return HibernatePersistenceProvider.class.getName();
        }

        @Override
        public PersistenceUnitTransactionType getTransactionType() {
            return PersistenceUnitTransactionType.RESOURCE_LOCAL;
        }

        @Override
        public DataSource getJtaDataSource() {
            return null;
        }

        @Override
        public DataSource getNonJtaDataSource() {
            return dataSource;
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
            return null;
        }

        @Override
        public List<String> getManagedClassNames() {
            return List.of(MessageProcessed.class.getName());
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
            return new Properties();
        }

        @Override
        public String getPersistenceXMLSchemaVersion() {
            return "3.0";
        }

        @Override
        public ClassLoader getClassLoader() {
            return CamelPeers.class.getClassLoader();
        }

        @Override
        public void addTransformer(ClassTransformer transformer) {
        }

        @Override
        public ClassLoader getNewTempClassLoader() {
            return null;
        }
    }
}
