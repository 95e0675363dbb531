package dev.idempotency.testing;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A real single-node Kafka broker (Apache Kafka 4.4 in KRaft mode, broker and controller in one JVM of its own) on
 * loopback, on two free ports, for the tests of Kafka consumers. Its class path is written by the build
 * (src/test/kafka-broker/pom.xml; the system property {@code kafka.broker.classpath} names the file, else
 * {@code target/kafka-broker.classpath}). Its data and log live under the directory it is given.
 *
 * <p>It stops on every path: {@link #close()} ends it (SIGTERM, then SIGKILL after 20 s); a shutdown hook does the
 * same when the test JVM exits; and when the test JVM dies without either (SIGKILL, a build's timeout), the broker
 * reads end-of-file on its standard input, which this JVM holds, and halts. Shared by the root build's tests and the
 * in-server tests (src/test/shared).
 */
public final class KafkaBroker implements AutoCloseable {

    /** The first step of the broker JVM: halt when the JVM that started it goes away, then run Kafka. */
    private static final String GUARD = """
            public class KafkaBrokerGuard {
                public static void main(String[] args) throws Exception {
                    Thread parent = new Thread(() -> {
                        try {
                            while (System.in.read() >= 0) {
                                // the test JVM holds the other end; end of file means it is gone
                            }
                        } catch (java.io.IOException ignored) {
                            // gone as well
                        }
                        Runtime.getRuntime().halt(3);
                    }, "parent-watch");
                    parent.setDaemon(true);
                    parent.start();
                    kafka.Kafka.main(args);
                }
            }
            """;

    private final Path dir;
    private final int port;
    private final int controllerPort;
    private final Process process;
    private final Thread hook;

    private KafkaBroker(Path dir, int port, int controllerPort, Process process) {
        this.dir = dir;
        this.port = port;
        this.controllerPort = controllerPort;
        this.process = process;
        this.hook = new Thread(this::stop, "kafka-broker-stop");
        Runtime.getRuntime().addShutdownHook(hook);
    }

    /** Formats a new broker's storage under {@code dir} (emptied first), starts it, and waits until it answers. */
    public static KafkaBroker start(Path dir) {
        try {
            return launch(dir.toAbsolutePath());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static KafkaBroker launch(Path dir) throws IOException, InterruptedException {
        String classpath = classpath();
        deleteRecursively(dir);
        Files.createDirectories(dir);
        int port = freePort();
        int controllerPort = freePort();
        Path config = dir.resolve("server.properties");
        Files.writeString(config, String.join("\n",
                "process.roles=broker,controller",
                "node.id=1",
                "controller.quorum.voters=1@127.0.0.1:" + controllerPort,
                "listeners=PLAINTEXT://127.0.0.1:" + port + ",CONTROLLER://127.0.0.1:" + controllerPort,
                "advertised.listeners=PLAINTEXT://127.0.0.1:" + port,
                "controller.listener.names=CONTROLLER",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                "log.dirs=" + dir.resolve("data"),
                "num.partitions=1",
                "offsets.topic.replication.factor=1",
                "offsets.topic.num.partitions=3",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
                // a group's first member starts at once, not after 3 s
                "group.initial.rebalance.delay.ms=0",
                ""), StandardCharsets.UTF_8);
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Path log = dir.resolve("broker.log");
        Process format = new ProcessBuilder(java.toString(), "-Xmx256m", "-cp", classpath, "kafka.tools.StorageTool",
                "format", "-t", UUID.randomUUID().toString().replace("-", "").substring(0, 22), "-c", config.toString())
                .redirectErrorStream(true).redirectOutput(dir.resolve("format.log").toFile()).start();
        if (!format.waitFor(60, TimeUnit.SECONDS) || format.exitValue() != 0) {
            format.destroyForcibly();
            throw new IllegalStateException("Kafka's storage format failed: " + Files.readString(dir.resolve("format.log")));
        }
        Path guard = dir.resolve("KafkaBrokerGuard.java");
        Files.writeString(guard, GUARD, StandardCharsets.UTF_8);
        Process process = new ProcessBuilder(java.toString(), "-Xmx512m", "-Xss1m",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
                "-cp", classpath, guard.toString(), config.toString())
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        KafkaBroker broker = new KafkaBroker(dir, port, controllerPort, process);
        try {
            broker.awaitReady(Duration.ofSeconds(90));
        } catch (RuntimeException | Error e) {
            broker.close();
            throw new IllegalStateException("The Kafka broker did not start; its log:\n" + broker.tail(), e);
        }
        return broker;
    }

    private static String classpath() throws IOException {
        Path file = Path.of(System.getProperty("kafka.broker.classpath", "target/kafka-broker.classpath"));
        if (!Files.isRegularFile(file)) {
            throw new IllegalStateException("No Kafka broker class path at " + file.toAbsolutePath()
                    + ": the root build writes it before its tests (src/test/kafka-broker/pom.xml)");
        }
        return Files.readString(file).trim();
    }

    private void awaitReady(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        RuntimeException last = null;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IllegalStateException("The Kafka broker exited with " + process.exitValue());
            }
            try (Admin admin = admin()) {
                admin.describeCluster().nodes().get(5, TimeUnit.SECONDS);
                return;
            } catch (ExecutionException | TimeoutException e) {
                last = new IllegalStateException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        throw new IllegalStateException("The Kafka broker did not answer within " + timeout, last);
    }

    /** {@code host:port} of the broker's listener, for {@code bootstrap.servers}. */
    public String bootstrapServers() {
        return "127.0.0.1:" + port;
    }

    public Admin admin() {
        return Admin.create(Map.of(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers(),
                AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, 10_000, AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, 20_000));
    }

    /** Creates a topic with {@code partitions} partitions, and waits until it exists. */
    public void createTopic(String name, int partitions) {
        try (Admin admin = admin()) {
            admin.createTopics(List.of(new NewTopic(name, partitions, (short) 1))).all().get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("The topic " + name + " was not created", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** How many partitions the topic has. */
    public int partitions(String topic) {
        try (Admin admin = admin()) {
            return admin.describeTopics(List.of(topic)).allTopicNames().get(10, TimeUnit.SECONDS).get(topic).partitions().size();
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("The topic " + topic + " could not be described", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** The group's committed offset of one partition of the topic; 0 when it committed none. */
    public long committed(String group, String topic, int partition) {
        try (Admin admin = admin()) {
            OffsetAndMetadata o = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                    .get(10, TimeUnit.SECONDS).get(new TopicPartition(topic, partition));
            return o == null ? 0 : o.offset();
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("The offsets of " + group + " could not be read", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * Whether the group's committed offsets are at the end of every partition of the topic: every record acknowledged
     * (a consumer commits the offsets of the records acknowledged in order). False while the broker cannot tell.
     */
    public boolean allCommitted(String group, String topic) {
        int partitions = partitions(topic);
        try (Admin admin = admin()) {
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (int p = 0; p < partitions; p++) {
                latest.put(new TopicPartition(topic, p), OffsetSpec.latest());
            }
            Map<TopicPartition, ListOffsetsResult.ListOffsetsResultInfo> ends = admin.listOffsets(latest).all()
                    .get(10, TimeUnit.SECONDS);
            Map<TopicPartition, OffsetAndMetadata> done = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
            return ends.entrySet().stream().allMatch(e -> done.get(e.getKey()) != null
                    && done.get(e.getKey()).offset() == e.getValue().offset());
        } catch (ExecutionException | TimeoutException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** A producer of text keys and values that waits for every write to be acknowledged. */
    public KafkaProducer<String, String> producer() {
        Properties p = new Properties();
        p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
        p.put(ProducerConfig.ACKS_CONFIG, "all");
        p.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, true);
        p.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        p.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
        return new KafkaProducer<>(p);
    }

    /** The last lines of the broker's log, for a failure's message. */
    public String tail() {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("broker.log"), StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e + ")";
        }
    }

    private void stop() {
        if (!process.isAlive()) {
            return;
        }
        process.destroy();
        try {
            if (!process.waitFor(20, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void close() {
        stop();
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException alreadyExiting) {
            // the hook runs, or ran: nothing to remove
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket()) {
            socket.setReuseAddress(false);
            socket.bind(new InetSocketAddress("127.0.0.1", 0));
            return socket.getLocalPort();
        }
    }

    private static void deleteRecursively(Path root) throws IOException {
        if (!Files.exists(root)) {
            return;
        }
        List<Path> paths = new ArrayList<>();
        try (var walk = Files.walk(root)) {
            walk.forEach(paths::add);
        }
        for (int i = paths.size() - 1; i >= 0; i--) {
            Files.deleteIfExists(paths.get(i));
        }
    }

    @Override
    public String toString() {
        return "Kafka broker at " + bootstrapServers() + " (controller " + controllerPort + ", pid " + process.pid() + ")";
    }
}
