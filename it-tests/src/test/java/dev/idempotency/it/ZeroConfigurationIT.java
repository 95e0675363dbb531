package dev.idempotency.it;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.net.http.HttpResponse;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Zero configuration: the example's WAR exactly as built, with no configuration file at all (the other in-server tests
 * add one for their test beans): the library starts on the server's defaults and protects the payments.
 */
class ZeroConfigurationIT extends ServerIT {

    static final String CONFIG = "/WEB-INF/classes/META-INF/microprofile-config.properties";

    @Deployment(testable = false)
    static WebArchive deployment() {
        return asBuilt();
    }

    static WebArchive asBuilt() {
        return ShrinkWrap.createFromZipFile(WebArchive.class, new File(System.getProperty("example.war")));
    }

    @Test
    @DisplayName("no configuration file anywhere in the deployment; a payment and its retry: charged once, replayed")
    void theExampleAsBuiltRunsWithNoConfiguration() throws Exception {
        assertThat(asBuilt().contains(CONFIG)).as("the deployment carries no " + CONFIG).isFalse();
        assertThat(asBuilt().contains("/META-INF/microprofile-config.properties")).isFalse();
        long charges = stat("charges");
        String key = UUID.randomUUID().toString();
        String payment = "{\"amount\":700,\"currency\":\"EUR\",\"reference\":\"zero-config\"}";
        HttpResponse<String> first = send(postJson("api/payments", key, payment));
        HttpResponse<String> retry = send(postJson("api/payments", key, payment));
        assertThat(first.statusCode()).as(first.body()).isEqualTo(201);
        assertThat(retry.statusCode()).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(retry.body()).isEqualTo(first.body());
        assertThat(stat("charges")).isEqualTo(charges + 1);
        assertThat(send(postJson("api/payments", null, payment)).statusCode()).as("the header is required by default").isEqualTo(400);
    }
}
