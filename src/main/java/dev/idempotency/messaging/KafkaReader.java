package dev.idempotency.messaging;

import dev.idempotency.IdempotencyKeys;

import dev.idempotency.config.MethodSettings;
import dev.idempotency.runtime.CallReader;
import dev.idempotency.runtime.JsonCodec;

import org.eclipse.microprofile.reactive.messaging.Message;

import java.nio.charset.StandardCharsets;

import static dev.idempotency.messaging.Reflection.call;
import static dev.idempotency.messaging.Reflection.publicMethod;

/**
 * The key and fingerprint of a Kafka record that an {@code @Incoming} method receives: the Kafka broker's one class.
 * Kafka's types are read by reflection, so that the library needs no Kafka client.
 *
 * <p>The record is found, in this order: the payload itself when it is Kafka's {@code ConsumerRecord}; SmallRye's
 * {@code IncomingKafkaRecordMetadata} among the message's metadata (WildFly, Quarkus); {@code message.unwrap(ConsumerRecord.class)}
 * (Open Liberty's connector).
 */
record KafkaReader(MethodSettings method) implements CallReader {

    private static final String CONSUMER_RECORD = "org.apache.kafka.clients.consumer.ConsumerRecord";

    /**
     * The key of a record: the value of its header {@code messageProperty} (UTF-8) when one is named ({@code null} when
     * the record has no such header); else its header {@code Idempotency-Derived-Key} where it has one (the key a sender derived,
     * {@link dev.idempotency.IdempotencyKeys}), else its coordinates, {@code topic/partition/offset}; {@code null} for no
     * Kafka record.
     */
    @Override
    public Object key(Object[] args) {
        Object record = record(args[0]);
        if (record == null) {
            return null;
        }
        String header = method.messageProperty();
        if (header != null) {
            return header(record, header);
        }
        String sent = header(record, IdempotencyKeys.HEADER);
        if (sent != null && !sent.isBlank()) {
            return sent;
        }
        return call(record, "topic", "getTopic") + "/" + call(record, "partition", "getPartition") + "/"
                + call(record, "offset", "getOffset");
    }

    /** The record's last header of this name, as UTF-8 text, or {@code null}. */
    private static String header(Object record, String name) {
        Object headers = call(record, "headers", "getHeaders");
        Object last = headers == null ? null : lastHeader(headers, name);
        Object value = last == null ? null : call(last, "value");
        return value instanceof byte[] bytes ? new String(bytes, StandardCharsets.UTF_8) : null;
    }

    @Override
    public String noKey(Object[] args) {
        if (record(args[0]) == null) {
            return "the message carries no Kafka record (its topic, partition and offset, or headers)";
        }
        return "the record has no header " + method.messageProperty();
    }

    /** SHA-256 over the namespace and the payload (text, bytes, or its JSON). */
    @Override
    public String fingerprint(Object[] args, JsonCodec codec) {
        Object argument = args[0];
        return Payloads.fingerprint(method.namespace(), isConsumerRecord(argument) ? call(argument, "value") : argument, codec);
    }

    /** Whether the argument is, or carries, a Kafka record. */
    static boolean reads(Object argument) {
        return record(argument) != null;
    }

    /** The Kafka record (a {@code ConsumerRecord}, or SmallRye's metadata of one) behind the argument, or {@code null}. */
    private static Object record(Object argument) {
        if (isConsumerRecord(argument)) {
            return argument;
        }
        if (!(argument instanceof Message<?> message)) {
            return null;
        }
        Object metadata = call(message, "getMetadata");
        if (metadata instanceof Iterable<?> all) {
            for (Object m : all) {
                if (m != null && m.getClass().getName().startsWith("io.smallrye.reactive.messaging.kafka")
                        && publicMethod(m.getClass(), "getOffset") != null && publicMethod(m.getClass(), "getHeaders") != null) {
                    return m;
                }
            }
        }
        try {
            Class<?> type = Class.forName(CONSUMER_RECORD, false, message.getClass().getClassLoader());
            return message.unwrap(type);
        } catch (ClassNotFoundException | LinkageError | RuntimeException e) {
            return null; // not a Kafka message, or a connector that cannot unwrap its record
        }
    }

    private static boolean isConsumerRecord(Object o) {
        for (Class<?> c = o == null ? null : o.getClass(); c != null; c = c.getSuperclass()) {
            if (c.getName().equals(CONSUMER_RECORD)) {
                return true;
            }
        }
        return false;
    }

    /** Kafka's {@code Headers.lastHeader(name)}. */
    private static Object lastHeader(Object headers, String name) {
        return Reflection.callWith(headers, "lastHeader", name);
    }
}
