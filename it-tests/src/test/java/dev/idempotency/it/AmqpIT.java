package dev.idempotency.it;

import dev.idempotency.example.AmqpConsumers;
import dev.idempotency.example.ConsumerRuns;
import dev.idempotency.example.KafkaResource;
import dev.idempotency.testing.RabbitMq;

import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * AMQP 1.0 consumers ({@code @Incoming} with {@code @Idempotent}) in WildFly, whose full distribution has SmallRye's
 * AMQP 1.0 connector among the Reactive Messaging subsystems' modules (enabled by the build's CLI for Kafka too), against
 * the machine's RabbitMQ through its AMQP 1.0 plugin ({@code .ci/run} starts RabbitMQ and enables it). Runs in the
 * wildfly profile; Open Liberty's Reactive Messaging has its Kafka connector only.
 */
@ExtendWith(ArquillianExtension.class)
class AmqpIT {

    static final String QUEUE = "it-amqp";

    static RabbitMq broker;

    @BeforeAll
    static void queue() throws Exception {
        broker = RabbitMq.connect();
        broker.assumeAmqp10();
        broker.freshQueue(QUEUE);
    }

    @AfterAll
    static void close() {
        if (broker != null) {
            broker.close();
        }
    }

    @Deployment(name = "amqp", managed = false, testable = false)
    static WebArchive consumers() {
        String p = "mp.messaging.incoming." + QUEUE + ".";
        String config = ConsumerResults.resource("it-microprofile-config.properties") + "\n"
                + p + "connector=smallrye-amqp\n"
                + p + "address=/amq/queue/" + QUEUE + "\n"
                + p + "failure-strategy=release\n"
                + "amqp-host=" + RabbitMq.HOST + "\n"
                + "amqp-port=" + RabbitMq.PORT + "\n"
                + "amqp-username=guest\n"
                + "amqp-password=guest\n";
        WebArchive war = ServerIT.exampleWithTestBeans()
                .addClasses(AmqpConsumers.class, ConsumerRuns.class, KafkaResource.class)
                .addAsResource(new StringAsset(config), "META-INF/microprofile-config.properties");
        return ShrinkWrap.create(WebArchive.class, "amqp.war").merge(war);
    }

    @ArquillianResource
    Deployer deployer;

    /**
     * 40 keys by message-id, each published three times (a redelivery, or a sender's retry that keeps its message-id:
     * RabbitMQ's AMQP 1.0 plugin hands an AMQP 0.9.1 publisher's message-id to AMQP 1.0 consumers, not its headers), and
     * 10 published once, shuffled: one payment per key, each run once, every message acknowledged.
     */
    @Test
    @DisplayName("Duplicates by message-id over AMQP 1.0 in WildFly: one payment per key, every message acknowledged")
    void oneRowPerKey() throws Exception {
        List<String[]> messages = new ArrayList<>(); // body, message-id
        for (int i = 0; i < 50; i++) {
            String key = String.format("A-%03d", i);
            for (int copy = 0; copy < (i < 40 ? 3 : 1); copy++) {
                messages.add(new String[] {key + "|" + (100 + i), key});
            }
        }
        Collections.shuffle(messages, new Random(60));
        deployer.deploy("amqp");
        for (String[] m : messages) {
            broker.publish(QUEUE, m[0], m[1], Map.of());
        }
        String base = ConsumerResults.base("amqp");
        ConsumerResults.await("the 50 keys paid", () -> ConsumerResults.rows(base, "amqp").size() == 50);
        broker.awaitSettled(QUEUE, 90);
        assertThat(ConsumerResults.rows(base, "amqp")).as("one payment per key, each key run once: <key>=[rows, runs]")
                .hasSize(50).allSatisfy((key, counts) -> assertThat(counts).containsExactly(1L, 1L));
        deployer.undeploy("amqp");
        assertThat(broker.ready(QUEUE)).as("every message acknowledged").isZero();
    }
}
