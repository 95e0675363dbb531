package dev.idempotency.it;

import dev.idempotency.example.MsgFollowUps;
import dev.idempotency.example.MsgLedgerConsumer;
import dev.idempotency.example.MsgPoisonConsumer;
import dev.idempotency.example.MsgProviderA;
import dev.idempotency.example.MsgProviderB;
import dev.idempotency.example.MsgResource;
import dev.idempotency.example.MsgSmsConsumer;
import dev.idempotency.example.MsgSmsGateway;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Message-driven beans with the server's embedded broker (WildFly standalone-full: ActiveMQ Artemis, which
 * redelivers a rolled back message at once, up to 10 times).
 */
class MessagingIT extends ServerIT {

    @Deployment(testable = false)
    static WebArchive deployment() {
        return exampleWithTestBeans().addClasses(MsgResource.class, MsgResource.Counts.class, MsgSmsGateway.class,
                MsgFollowUps.class, MsgSmsConsumer.class, MsgLedgerConsumer.class, MsgProviderA.class, MsgProviderB.class,
                MsgPoisonConsumer.class, MsgPoisonConsumer.UnprocessableOrderException.class);
    }

    String counts() throws Exception {
        return send(request("api/it/messaging/counts")).body();
    }

    /** A count in one of the per-key maps of the counts, 0 when absent. */
    static int keyed(String json, String map, String key) {
        Matcher m = Pattern.compile("\"" + map + "\"\\s*:\\s*\\{([^}]*)}").matcher(json);
        if (!m.find()) {
            return 0;
        }
        Matcher k = Pattern.compile("\"" + Pattern.quote(key) + "\"\\s*:\\s*(\\d+)").matcher(m.group(1));
        return k.find() ? Integer.parseInt(k.group(1)) : 0;
    }

    @Test
    @DisplayName("The SMS is sent once although the message is redelivered after a later failure")
    void smsSentOnce() throws Exception {
        long sent = number(counts(), "smsSent");
        long runs = number(counts(), "smsRuns");
        long published = number(counts(), "followUpsPublished");
        send(postJson("api/it/messaging/follow-up-failures/2", null, ""));
        String id = send(postJson("api/it/messaging/sms?text=hello", null, "")).body().replace("\"", "");
        await("the follow-up is published", () -> number(counts(), "followUpsPublished") == published + 1);
        String c = counts();
        assertThat(number(c, "smsRuns")).as("the message ran three times: two failures, one success").isEqualTo(runs + 3);
        assertThat(number(c, "smsSent")).as("one SMS").isEqualTo(sent + 1);
        // An atomic claim (the default) rolls back with each failed delivery and leaves no trace: the committed
        // record is the third delivery's, its first attempt (the broker counts deliveries: JMSXDeliveryCount).
        assertThat(Long.parseLong(send(request("api/it/messaging/attempts?key=" + id)).body())).isEqualTo(1);
    }

    @Test
    @DisplayName("Container-managed transaction: a rollback takes the key row with it, the redelivery runs again and commits once; "
            + "a re-published entry is then a no-op")
    void containerManagedRollbackThenRedelivery() throws Exception {
        String entry = "E-" + UUID.randomUUID();
        String marker = "M-" + UUID.randomUUID();
        send(postJson("api/it/messaging/ledger/" + entry + "?failOnce=true", null, ""));
        await("the entry is committed", () -> number(send(request("api/it/messaging/ledger/" + entry)).body(), "rows") == 1);
        String afterRedelivery = counts();
        assertThat(keyed(afterRedelivery, "ledgerRuns", entry)).as(afterRedelivery).isEqualTo(2);
        assertThat(number(send(request("api/it/messaging/ledger/" + entry)).body(), "attempts"))
                .as("the rolled back delivery left no trace: " + send(request("api/it/messaging/records?key=" + entry)).body())
                .isEqualTo(1);

        send(postJson("api/it/messaging/ledger/" + entry, null, ""));   // re-published: a new JMS message, same entryId
        send(postJson("api/it/messaging/ledger/" + marker, null, ""));  // one session: consumed after it
        await("the marker is consumed", () -> keyed(counts(), "ledgerRuns", marker) == 1);
        assertThat(keyed(counts(), "ledgerRuns", entry)).isEqualTo(2);
        assertThat(number(send(request("api/it/messaging/ledger/" + entry)).body(), "rows")).isEqualTo(1);
    }

    @Test
    @DisplayName("Two consumers (two namespaces) of one notification id: each handles it once")
    void twoNamespaces() throws Exception {
        String n = "N-" + UUID.randomUUID();
        String marker = "M-" + UUID.randomUUID();
        send(postJson("api/it/messaging/notifications/" + n, null, ""));
        send(postJson("api/it/messaging/notifications/" + n, null, ""));   // re-published
        send(postJson("api/it/messaging/notifications/" + marker, null, ""));
        await("both consumers saw the marker",
                () -> keyed(counts(), "providerA", marker) == 1 && keyed(counts(), "providerB", marker) == 1);
        String c = counts();
        assertThat(keyed(c, "providerA", n)).as(c + send(request("api/it/messaging/records?key=" + n)).body()).isEqualTo(1);
        assertThat(keyed(c, "providerB", n)).isEqualTo(1);
    }

    @Test
    @DisplayName("A kept failure (keepOn) is stored as FAILED and rethrown to every redelivery: the body ran once")
    void keptFailure() throws Exception {
        String order = "O-" + UUID.randomUUID();
        String marker = "M-" + UUID.randomUUID();
        send(postJson("api/it/messaging/orders/" + order + "?poison=true", null, ""));
        send(postJson("api/it/messaging/orders/" + marker, null, ""));   // one session: after the poison's redeliveries
        await("the marker is consumed", () -> keyed(counts(), "poisonRuns", marker) == 1);
        assertThat(keyed(counts(), "poisonRuns", order)).isEqualTo(1);
        assertThat(send(request("api/it/messaging/status?key=" + order)).body()).isEqualTo("\"FAILED\"");
    }
}
