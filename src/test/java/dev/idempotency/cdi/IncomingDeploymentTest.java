package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.testing.IdempotencyWeld;

import io.smallrye.mutiny.Multi;

import jakarta.enterprise.context.ApplicationScoped;

import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Outgoing;
import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

import static dev.idempotency.cdi.DeploymentErrorsTest.deploymentFailure;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * An {@code @Idempotent} {@code @Incoming} method that cannot run once per record fails the deployment, naming the
 * method and the shapes that work; the shapes that work deploy.
 */
class IncomingDeploymentTest {

    public record Payment(String id, long amount) {
    }

    public record KeyedPayment(@IdempotencyKey String id, long amount) {
    }

    @ApplicationScoped
    public static class Streams {
        @Incoming("payments")
        @Idempotent
        public void consume(Multi<Message<String>> records) {
        }
    }

    @ApplicationScoped
    public static class Subscribers {
        @Incoming("payments")
        @Idempotent
        public Flow.Subscriber<Message<String>> consume() {
            return null;
        }
    }

    @ApplicationScoped
    public static class Processor {
        @Incoming("payments")
        @Outgoing("receipts")
        @Idempotent
        public String process(ConsumerRecord<String, String> record) {
            return record.value();
        }
    }

    @ApplicationScoped
    public static class NoKey {
        @Incoming("payments")
        @Idempotent
        public void consume(Payment payment) {
        }
    }

    @ApplicationScoped
    public static class TwoKeys {
        @Incoming("payments")
        @Idempotent(messageProperty = "Idempotency-Key")
        public void consume(KeyedPayment payment) {
        }
    }

    @ApplicationScoped
    public static class BadHeader {
        @Incoming("payments")
        @Idempotent(messageProperty = "Idempotency Key")
        public CompletionStage<Void> consume(Message<String> message) {
            return message.ack();
        }
    }

    @ApplicationScoped
    public static class ReturnsAValue {
        @Incoming("payments")
        @Idempotent
        public String consume(ConsumerRecord<String, String> record) {
            return record.value();
        }
    }

    @ApplicationScoped
    public static class KeptFailuresOffAConsumer {
        @Idempotent
        public void charge(@IdempotencyKey String key) {
        }
    }

    @ApplicationScoped
    public static class GoodConsumers {
        @Incoming("a")
        @Idempotent(messageProperty = "ce_id")
        public CompletionStage<Void> byHeader(Message<Payment> message) {
            return message.ack();
        }

        @Incoming("b")
        @Idempotent
        public void byCoordinates(ConsumerRecord<String, byte[]> record) {
        }

        @Incoming("c")
        @Idempotent
        public CompletionStage<Void> byKeyInside(KeyedPayment payment) {
            return CompletableFuture.completedFuture(null);
        }
    }

    @Test
    void streamsAndSubscribersAreRefusedNamingTheShapesThatWork() {
        assertThat(deploymentFailure(Map.of(), Streams.class))
                .contains(Streams.class.getName() + "#consume is an @Incoming method on a stream (io.smallrye.mutiny.Multi)")
                .contains("CompletionStage<Void> m(Message<T>)");
        assertThat(deploymentFailure(Map.of(), Subscribers.class))
                .contains(Subscribers.class.getName() + "#consume is an @Incoming method on a stream (java.util.concurrent.Flow$Subscriber)");
    }

    @Test
    void aProcessorIsRefused() {
        assertThat(deploymentFailure(Map.of(), Processor.class))
                .contains(Processor.class.getName() + "#process is a processor (@Incoming and @Outgoing)")
                .contains("send on with an Emitter");
    }

    @Test
    void aPayloadWithoutAKeyIsRefused() {
        assertThat(deploymentFailure(Map.of(), NoKey.class))
                .contains(NoKey.class.getName() + "#consume is an @Incoming method whose payload carries no key")
                .contains("take the Message<T>");
    }

    @Test
    void aHeaderAndAKeyInsideThePayloadAreTwoKeys() {
        assertThat(deploymentFailure(Map.of(), TwoKeys.class))
                .contains(TwoKeys.class.getName() + "#consume names a messageProperty, and its key is inside its payload");
    }

    @Test
    void aHeaderNameWithASpaceIsRefused() {
        assertThat(deploymentFailure(Map.of(), BadHeader.class))
                .contains("is not a record header name");
        assertThat(deploymentFailure(Map.of(), ReturnsAValue.class))
                .contains(ReturnsAValue.class.getName() + "#consume is an @Incoming method that returns java.lang.String");
    }

    @Test
    void keptFailuresIsForConsumers() {
        assertThat(deploymentFailure(Map.of(KeptFailuresOffAConsumer.class.getName() + "/charge/Idempotent/keptFailures", "nack"),
                KeptFailuresOffAConsumer.class))
                .contains("#charge names keptFailures, which is for @Incoming methods");
        assertThat(deploymentFailure(Map.of("Idempotent/keptFailures", "sometimes"), GoodConsumers.class))
                .contains("keptFailures");
    }

    @Test
    void theShapesThatWorkDeploy() {
        try (WeldContainer c = IdempotencyWeld.weld(Map.of("idempotency.store", "memory"), GoodConsumers.class).initialize()) {
            assertThat(c.select(GoodConsumers.class).isResolvable()).isTrue();
        }
    }
}
