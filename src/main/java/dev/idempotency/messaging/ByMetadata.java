package dev.idempotency.messaging;

import dev.idempotency.config.MethodSettings;
import dev.idempotency.runtime.CallReader;
import dev.idempotency.runtime.JsonCodec;

/**
 * The reader of a consumer whose channel's connector the configuration does not name, or names one the library has no
 * reader of (an in-memory channel in tests, a connector of a runtime's own): each message is read by the broker whose
 * metadata it carries (Kafka's, RabbitMQ's, AMQP 1.0's); a message that carries none has no key.
 */
record ByMetadata(KafkaReader kafka, RabbitMqReader rabbitMq, AmqpReader amqp) implements CallReader {

    ByMetadata(MethodSettings m) {
        this(new KafkaReader(m), new RabbitMqReader(m), new AmqpReader(m));
    }

    private CallReader readerOf(Object argument) {
        if (KafkaReader.reads(argument)) {
            return kafka;
        }
        if (RabbitMqReader.reads(argument)) {
            return rabbitMq;
        }
        return AmqpReader.reads(argument) ? amqp : null;
    }

    @Override
    public Object key(Object[] args) {
        CallReader reader = readerOf(args[0]);
        return reader == null ? null : reader.key(args);
    }

    @Override
    public String noKey(Object[] args) {
        CallReader reader = readerOf(args[0]);
        return reader != null ? reader.noKey(args)
                : "the message carries no broker's metadata that holds a key (a Kafka record, a RabbitMQ or an AMQP 1.0 message)";
    }

    @Override
    public String fingerprint(Object[] args, JsonCodec codec) {
        return kafka.fingerprint(args, codec); // a ConsumerRecord's value, else the message's payload: as every broker's
    }
}
