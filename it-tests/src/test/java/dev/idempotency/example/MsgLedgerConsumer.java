package dev.idempotency.example;

import dev.idempotency.Idempotent;

import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Container-managed transaction: the ledger row and the record commit together; keyed by the entryId
 * property, so a re-published entry is a duplicate too.
 */
@MessageDriven(activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationLookup", propertyValue = MsgResource.LEDGER_QUEUE),
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "maxSession", propertyValue = "1")})
public class MsgLedgerConsumer implements MessageListener {

    static final Map<String, AtomicInteger> RUNS = new ConcurrentHashMap<>();
    static final Set<String> FAILED_ONCE = ConcurrentHashMap.newKeySet();

    @PersistenceContext
    EntityManager em;

    @Idempotent(messageProperty = "entryId")
    @Override
    public void onMessage(Message message) {
        try {
            String entryId = message.getStringProperty("entryId");
            RUNS.computeIfAbsent(entryId, k -> new AtomicInteger()).incrementAndGet();
            em.persist(new Transfer(entryId, 100, "ledger", "ledger"));
            em.flush();
            if (message.getBooleanProperty("failOnce") && FAILED_ONCE.add(entryId)) {
                throw new IllegalStateException("the ledger write failed after it started");
            }
        } catch (JMSException e) {
            throw new IllegalStateException(e);
        }
    }
}
