package dev.idempotency.it;

import dev.idempotency.example.ConsumerRuns;
import dev.idempotency.example.KafkaConsumers;
import dev.idempotency.example.KafkaResource;
import dev.idempotency.testing.KafkaBroker;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.jboss.arquillian.container.test.api.Deployer;
import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.arquillian.junit5.ArquillianExtension;
import org.jboss.arquillian.test.api.ArquillianResource;
import org.jboss.shrinkwrap.api.ShrinkWrap;
import org.jboss.shrinkwrap.api.asset.StringAsset;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import static dev.idempotency.it.ConsumerResults.await;
import static dev.idempotency.it.ConsumerResults.base;
import static dev.idempotency.it.ConsumerResults.liberty;
import static dev.idempotency.it.ConsumerResults.resource;
import static dev.idempotency.it.ConsumerResults.rows;
import static dev.idempotency.it.ConsumerResults.runs;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kafka consumers ({@code @Incoming} with {@code @Idempotent}) in the server, against a real Kafka broker the test
 * starts (its own JVM, on loopback). WildFly runs SmallRye Reactive Messaging's Kafka connector (its subsystems enabled
 * by the build's CLI), Open Liberty its own connector. The consumers are redeployed to get a new consumer instance:
 * a new group re-reads the ledger topic from offset 0 (a full redelivery), and the flaky and kept topics' records,
 * whose first delivery was refused, come again to their unchanged groups. Runs in the wildfly, liberty and
 * liberty-ee11 profiles.
 */
@ExtendWith(ArquillianExtension.class)
class KafkaIT {

    static final KafkaBroker BROKER = startBroker();
    static final String LEDGER = "it-ledger";
    static final String FLAKY = "it-flaky";
    static final String KEPT = "it-kept";

    static KafkaBroker startBroker() {
        KafkaBroker broker = KafkaBroker.start(Path.of("target", "kafka-it"));
        broker.createTopic(LEDGER, 3);
        broker.createTopic(FLAKY, 1);
        broker.createTopic(KEPT, 1);
        return broker;
    }

    @AfterAll
    static void stopBroker() {
        BROKER.close();
    }

    @Deployment(name = "first", managed = false, testable = false)
    static WebArchive first() {
        return consumers("kafka-first", "ledger-first");
    }

    @Deployment(name = "second", managed = false, testable = false)
    static WebArchive second() {
        return consumers("kafka-second", "ledger-second");
    }

    /** The example with the consumers; the ledger's group is {@code ledgerGroup}, the flaky and kept ones' are fixed. */
    static WebArchive consumers(String name, String ledgerGroup) {
        boolean liberty = liberty();
        StringBuilder config = new StringBuilder(resource("it-microprofile-config.properties")).append('\n');
        channel(config, LEDGER, ledgerGroup, liberty);
        channel(config, FLAKY, "flaky", liberty);
        channel(config, KEPT, "kept", liberty);
        WebArchive war = ServerIT.exampleWithTestBeans()
                .addClasses(KafkaConsumers.class, KafkaConsumers.UnpayableException.class, KafkaResource.class, ConsumerRuns.class)
                .addAsResource(new StringAsset(config.toString()), "META-INF/microprofile-config.properties");
        if (liberty) {
            // Open Liberty's connector runs the application's own Kafka client (and the logging API it needs)
            for (String jar : System.getProperty("kafka.client.jars").split(",")) {
                war.addAsLibraries(new java.io.File(jar));
            }
        }
        return ShrinkWrap.create(WebArchive.class, name + ".war").merge(war);
    }

    static void channel(StringBuilder config, String topic, String group, boolean liberty) {
        String p = "mp.messaging.incoming." + topic + ".";
        config.append(p).append("connector=").append(liberty ? "liberty-kafka" : "smallrye-kafka").append('\n')
                .append(p).append("topic=").append(topic).append('\n')
                .append(p).append("bootstrap.servers=").append(BROKER.bootstrapServers()).append('\n')
                .append(p).append("group.id=").append(group).append('\n')
                .append(p).append("auto.offset.reset=earliest\n")
                .append(p).append("key.deserializer=org.apache.kafka.common.serialization.StringDeserializer\n")
                .append(p).append("value.deserializer=org.apache.kafka.common.serialization.StringDeserializer\n");
        if (liberty) {
            config.append(p).append("enable.auto.commit=false\n");
        }
    }

    @ArquillianResource
    Deployer deployer;

    @Test
    @DisplayName("Duplicates by header, a full redelivery to a new consumer, a failed and a kept failure: one payment per key, every record acknowledged")
    void oneRowPerKey() throws Exception {
        // 150 keys, then 50 of them again (same header, same payload) on a random partition: 200 records
        Random random = new Random(47);
        List<ProducerRecord<String, String>> records = new ArrayList<>();
        Map<String, Long> amounts = new TreeMap<>();
        for (int i = 0; i < 150; i++) {
            String key = String.format("L-%03d", i);
            amounts.put(key, 100L + i);
            records.add(record(LEDGER, random.nextInt(3), key, key + "|" + (100 + i)));
        }
        for (int i = 0; i < 50; i++) {
            String key = String.format("L-%03d", random.nextInt(150));
            records.add(record(LEDGER, random.nextInt(3), key, key + "|" + amounts.get(key)));
        }
        send(records);
        send(List.of(record(FLAKY, 0, "F-1", "F-1|7")));
        send(List.of(record(KEPT, 0, "K-1", "K-1|9")));

        deployer.deploy("first");
        String first = base("kafka-first");
        await("the 150 keys paid", () -> rows(first, "kafka").size() == 150);
        await("every ledger record acknowledged by the first consumer", () -> allCommitted("ledger-first", LEDGER));
        assertThat(rows(first, "kafka")).as("one payment per key, each key run once: <key>=[rows, runs]")
                .allSatisfy((key, counts) -> assertThat(counts).containsExactly(1L, 1L));
        await("the flaky record ran", () -> runs(first, "kafka-flaky", "F-1") == 1);
        await("the kept record ran", () -> runs(first, "kafka-kept", "K-1") == 1);
        assertThat(rows(first, "kafka-flaky")).as("the failed run rolled back its payment").isEmpty();
        assertThat(rows(first, "kafka-kept")).as("the kept failure rolled back its payment").isEmpty();
        assertThat(committed("flaky", FLAKY)).as("the failed record was not acknowledged").isZero();
        assertThat(committed("kept", KEPT)).as("the kept failure's first delivery was refused").isZero();
        deployer.undeploy("first");

        // a new consumer: the ledger's new group re-reads all 200 records; the refused records come again
        deployer.deploy("second");
        String second = base("kafka-second");
        await("every ledger record acknowledged again by a new group", () -> allCommitted("ledger-second", LEDGER));
        await("the flaky record's second delivery acknowledged", () -> committed("flaky", FLAKY) == 1);
        await("the kept failure's redelivery acknowledged", () -> committed("kept", KEPT) == 1);
        assertThat(rows(second, "kafka")).as("the full redelivery ran nothing again").hasSize(150)
                .allSatisfy((key, counts) -> assertThat(counts).containsExactly(1L, 1L));
        assertThat(rows(second, "kafka-flaky")).as("the flaky record: one payment, two runs")
                .containsExactly(Map.entry("F-1", List.of(1L, 2L)));
        assertThat(runs(second, "kafka-kept", "K-1")).as("the kept failure was answered, not run again").isEqualTo(1);
        assertThat(rows(second, "kafka-kept")).isEmpty();

        // the channel still consumes
        send(List.of(record(LEDGER, 1, "L-new", "L-new|5")));
        await("a new record after the redelivery is paid", () -> rows(second, "kafka").containsKey("L-new"));
        deployer.undeploy("second");
    }

    static ProducerRecord<String, String> record(String topic, int partition, String key, String payload) {
        ProducerRecord<String, String> r = new ProducerRecord<>(topic, partition, null, payload);
        r.headers().add("Idempotency-Key", key.getBytes(StandardCharsets.UTF_8));
        return r;
    }

    static void send(List<ProducerRecord<String, String>> records) throws Exception {
        try (KafkaProducer<String, String> producer = BROKER.producer()) {
            for (ProducerRecord<String, String> r : records) {
                producer.send(r).get(30, TimeUnit.SECONDS);
            }
        }
    }

    static boolean allCommitted(String group, String topic) {
        return BROKER.allCommitted(group, topic);
    }

    /** The group's committed offset of partition 0 of the topic, 0 when none. */
    static long committed(String group, String topic) {
        return BROKER.committed(group, topic, 0);
    }

}
