package dev.idempotency.it;

import dev.idempotency.testing.PostgresStandbyPair;
import dev.idempotency.testing.PostgresStandbyPair.Replication;

import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.File;
import java.net.URI;
import java.nio.file.Path;
import java.nio.file.Paths;

/**
 * The failover of {@link FailoverUnderLoad} in WildFly: the example deployed with its payments and the library's records
 * on the data source {@code FailoverDS}, which the {@code wildfly-postgresql} profile defines on the driver's
 * multi-host URL over the test's primary and standby (ports 5443 and 5444), validated when a connection is handed out
 * ({@code validate-on-match}, PostgreSQL's connection checker and exception sorter, as the server's default data source
 * in that profile). Synchronous replication; the server is not restarted. Readiness is not watched: this server
 * configuration has no MicroProfile Health.
 */
@ExtendWith(ArquillianExtension.class)
class WildFlyFailoverIT {

    static final String PERSISTENCE = """
            <?xml version="1.0" encoding="UTF-8"?>
            <persistence xmlns="https://jakarta.ee/xml/ns/persistence" version="3.0">
              <persistence-unit name="payments" transaction-type="JTA">
                <jta-data-source>java:jboss/datasources/FailoverDS</jta-data-source>
                <class>dev.idempotency.example.Payment</class>
                <class>dev.idempotency.example.Transfer</class>
                <class>dev.idempotency.example.ByHandKey</class>
                <exclude-unlisted-classes>true</exclude-unlisted-classes>
                <properties>
                  <property name="jakarta.persistence.schema-generation.database.action" value="create"/>
                </properties>
              </persistence-unit>
            </persistence>
            """;

    /** The example, its own unit and the library's on FailoverDS, deployed once the pair runs. */
    @Deployment(name = "failover", managed = false, testable = false)
    static WebArchive failover() {
        WebArchive example = ShrinkWrap.createFromZipFile(WebArchive.class, new File(System.getProperty("example.war")))
                .addAsResource(new StringAsset(PERSISTENCE), "META-INF/persistence.xml")
                .addAsResource(new StringAsset("idempotency.datasource=java:jboss/datasources/FailoverDS\n"),
                        "META-INF/microprofile-config.properties");
        return ShrinkWrap.create(WebArchive.class, "failover.war").merge(example);
    }

    @ArquillianResource
    Deployer deployer;

    @Test
    void theExampleOnAMultiHostDataSourceAnswersEveryClientAcrossAFailoverAndChargesNoKeyTwice() throws Exception {
        PostgresStandbyPair.assumeAvailable();
        Path target = Paths.get("target").toAbsolutePath();
        try (PostgresStandbyPair pair = new PostgresStandbyPair(target.resolve("pg-failover"), 5443)) {
            pair.start(Replication.SYNCHRONOUS);
            deployer.deploy("failover");
            try {
                Path log = Paths.get(System.getProperty("jboss.home"), "standalone", "log", "server.log");
                new FailoverUnderLoad("WildFly", URI.create("http://127.0.0.1:8080/failover/"), pair, Replication.SYNCHRONOUS,
                        false, log).run();
            } finally {
                deployer.undeploy("failover");
            }
        }
    }
}
