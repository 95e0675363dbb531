package dev.idempotency.example;

import jakarta.annotation.Resource;
import jakarta.enterprise.context.RequestScoped;
import jakarta.inject.Inject;
import jakarta.jms.JMSContext;
import jakarta.jms.JMSDestinationDefinition;
import jakarta.jms.JMSDestinationDefinitions;
import jakarta.jms.Queue;
import jakarta.jms.TextMessage;
import jakarta.jms.Topic;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;

import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/** In-server messaging tests: publishes to the test destinations and reports what the consumers did. */
@JMSDestinationDefinitions({
        @JMSDestinationDefinition(name = MsgResource.SMS_QUEUE, interfaceName = "jakarta.jms.Queue", destinationName = "itSms"),
        @JMSDestinationDefinition(name = MsgResource.LEDGER_QUEUE, interfaceName = "jakarta.jms.Queue", destinationName = "itLedger"),
        @JMSDestinationDefinition(name = MsgResource.POISON_QUEUE, interfaceName = "jakarta.jms.Queue", destinationName = "itPoison"),
        @JMSDestinationDefinition(name = MsgResource.NOTIFICATIONS_TOPIC, interfaceName = "jakarta.jms.Topic",
                destinationName = "itNotifications")})
@Path("/it/messaging")
@RequestScoped
@Produces(MediaType.APPLICATION_JSON)
public class MsgResource {

    static final String SMS_QUEUE = "java:global/jms/itSms";
    static final String LEDGER_QUEUE = "java:global/jms/itLedger";
    static final String NOTIFICATIONS_TOPIC = "java:global/jms/itNotifications";
    static final String POISON_QUEUE = "java:global/jms/itPoison";

    @Inject
    JMSContext jms;

    @Resource(lookup = SMS_QUEUE)
    Queue sms;

    @Resource(lookup = LEDGER_QUEUE)
    Queue ledger;

    @Resource(lookup = NOTIFICATIONS_TOPIC)
    Topic notifications;

    @Resource(lookup = POISON_QUEUE)
    Queue poison;

    @PersistenceContext
    EntityManager em;

    public record Counts(int smsRuns, int smsSent, int followUpsPublished, Map<String, Integer> ledgerRuns,
                         Map<String, Integer> providerA, Map<String, Integer> providerB, Map<String, Integer> poisonRuns) {
    }

    @POST
    @Path("follow-up-failures/{n}")
    public int failFollowUps(@PathParam("n") int n) {
        MsgFollowUps.FAILURES_LEFT.set(n);
        return n;
    }

    /** Sends an SMS request; returns its JMS message id. */
    @POST
    @Path("sms")
    public String sms(@QueryParam("text") String text) throws Exception {
        TextMessage m = jms.createTextMessage(text);
        jms.createProducer().send(sms, m);
        return "\"" + m.getJMSMessageID() + "\"";
    }

    @POST
    @Path("ledger/{entryId}")
    public String ledger(@PathParam("entryId") String entryId, @QueryParam("failOnce") boolean failOnce) {
        jms.createProducer().setProperty("entryId", entryId).setProperty("failOnce", failOnce).send(ledger, "entry " + entryId);
        return "\"sent\"";
    }

    @POST
    @Path("notifications/{id}")
    public String notify(@PathParam("id") String id) {
        jms.createProducer().setProperty("notificationId", id).send(notifications, "notification " + id);
        return "\"sent\"";
    }

    @POST
    @Path("orders/{orderId}")
    public String order(@PathParam("orderId") String orderId, @QueryParam("poison") boolean poisonous) {
        jms.createProducer().setProperty("orderId", orderId).setProperty("poison", poisonous).send(poison, "order " + orderId);
        return "\"sent\"";
    }

    /** The status of a key's record. */
    @GET
    @Path("status")
    public String status(@QueryParam("key") String key) {
        List<?> rows = em.createNativeQuery("select status from idempotency_record where idem_key = ?1").setParameter(1, key).getResultList();
        return "\"" + (rows.isEmpty() ? "" : rows.get(0)) + "\"";
    }

    @GET
    @Path("counts")
    public Counts counts() {
        return new Counts(MsgSmsConsumer.RUNS.get(), MsgSmsGateway.SENT.get(), MsgFollowUps.PUBLISHED.get(),
                snapshot(MsgLedgerConsumer.RUNS), snapshot(MsgProviderA.HANDLED), snapshot(MsgProviderB.HANDLED),
                snapshot(MsgPoisonConsumer.RUNS));
    }

    /** How many rows the ledger has for an entry, and the attempts on the entry's record. */
    @GET
    @Path("ledger/{entryId}")
    public String ledgerState(@PathParam("entryId") String entryId) {
        long rows = em.createQuery("select count(t) from Transfer t where t.transferId = :id", Long.class)
                .setParameter("id", entryId).getSingleResult();
        List<?> attempts = em.createNativeQuery("select attempts from idempotency_record where idem_key = ?1 and status = 'COMPLETED'")
                .setParameter(1, entryId).getResultList();
        return "{\"rows\":" + rows + ",\"attempts\":" + (attempts.isEmpty() ? 0 : ((Number) attempts.get(0)).intValue()) + "}";
    }

    /** The records of a key, for failure messages. */
    @GET
    @Path("records")
    public String records(@QueryParam("key") String key) {
        List<?> rows = em.createNativeQuery("select namespace, principal, status, attempts, owner, version from idempotency_record where idem_key = ?1")
                .setParameter(1, key).getResultList();
        StringBuilder out = new StringBuilder("\"");
        for (Object row : rows) {
            out.append(java.util.Arrays.toString((Object[]) row)).append(' ');
        }
        return out.append('"').toString();
    }

    /** The attempts on the record of a JMS message id (the SMS consumer's onMessage). */
    @GET
    @Path("attempts")
    public int attempts(@QueryParam("key") String key) {
        List<?> attempts = em.createNativeQuery("select attempts from idempotency_record where idem_key = ?1 and namespace like ?2")
                .setParameter(1, key).setParameter(2, "%MsgSmsConsumer%").getResultList();
        return attempts.isEmpty() ? 0 : ((Number) attempts.get(0)).intValue();
    }

    private static Map<String, Integer> snapshot(Map<String, AtomicInteger> counts) {
        Map<String, Integer> out = new java.util.TreeMap<>();
        counts.forEach((k, v) -> out.put(k, v.get()));
        return out;
    }
}
