package dev.idempotency.it;

import org.jboss.arquillian.container.test.api.Deployment;
import org.jboss.shrinkwrap.api.spec.WebArchive;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.http.HttpResponse;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/** The {@code @Idempotent} interceptor in the server, its completion joining the business transaction: a CDI bean, a stateless EJB, JTA, configuration, defaults. */
class InterceptorIT extends ServerIT {

    @Deployment(testable = false)
    static WebArchive deployment() {
        return exampleWithTestBeans();
    }

    static String id() {
        return UUID.randomUUID().toString();
    }

    String transfer(String id) throws Exception {
        HttpResponse<String> r = send(postJson("api/transfers", null,
                "{\"transferId\":\"" + id + "\",\"amount\":250,\"from\":\"alice\",\"to\":\"bob\"}"));
        assertThat(r.statusCode()).isEqualTo(200);
        return r.body();
    }

    @Test
    @DisplayName("A CDI bean (the example's TransferService): a retried transfer runs once and replays its result")
    void cdiBean() throws Exception {
        long transfers = stat("transfers");
        long rows = count("transferRows");
        String id = id();
        String first = transfer(id);
        String again = transfer(id);
        assertThat(again).isEqualTo(first).contains(id);
        assertThat(stat("transfers")).isEqualTo(transfers + 1);
        assertThat(count("transferRows")).isEqualTo(rows + 1);
    }

    @Test
    @DisplayName("A stateless EJB: runs once per key")
    void ejb() throws Exception {
        long executions = count("ledgerExecutions");
        String id = id();
        String first = send(postJson("api/it/ledger/" + id, null, "")).body();
        String again = send(postJson("api/it/ledger/" + id, null, "")).body();
        assertThat(again).isEqualTo(first).contains(id);
        assertThat(count("ledgerExecutions")).isEqualTo(executions + 1);
    }

    @Test
    @DisplayName("JTA: the transfer row and the completed record commit together")
    void joinedCompletionCommitsTogether() throws Exception {
        long rows = count("transferRows");
        long completed = count("completedRecords");
        transfer(id());
        assertThat(count("transferRows")).isEqualTo(rows + 1);
        assertThat(count("completedRecords")).isEqualTo(completed + 1);
    }

    @Test
    @DisplayName("JTA: an exception rolls the write back and releases the key: the retry runs again")
    void failureReleases() throws Exception {
        long executions = count("failingExecutions");
        long rows = count("transferRows");
        String id = id();
        assertThat(send(postJson("api/it/transfers/" + id + "/fail", null, "")).statusCode()).isEqualTo(500);
        assertThat(send(postJson("api/it/transfers/" + id + "/fail", null, "")).statusCode()).isEqualTo(500);
        assertThat(count("failingExecutions")).isEqualTo(executions + 2);
        assertThat(count("transferRows")).isEqualTo(rows);
    }

    @Test
    @DisplayName("JTA: a business rollback after the idempotent call releases the key; the retry then commits once")
    void businessRollbackReleases() throws Exception {
        long transfers = stat("transfers");
        long rows = count("transferRows");
        String id = id();
        send(postJson("api/it/transfers/" + id + "/rollback", null, ""));
        assertThat(count("transferRows")).isEqualTo(rows);
        transfer(id);
        transfer(id);
        assertThat(stat("transfers")).isEqualTo(transfers + 2);
        assertThat(count("transferRows")).isEqualTo(rows + 1);
    }

    @Test
    @DisplayName("Configuration from the application's META-INF/microprofile-config.properties")
    void configurationFile() throws Exception {
        String off = id();
        long first = Long.parseLong(send(postJson("api/it/configured/off/" + off, null, "")).body());
        long second = Long.parseLong(send(postJson("api/it/configured/off/" + off, null, "")).body());
        assertThat(second).as("enabled=false: it ran again").isEqualTo(first + 1);

        String ttl = id();
        send(postJson("api/it/configured/ttl/" + ttl, null, ""));
        assertThat(Long.parseLong(send(request("api/it/ttl/" + ttl)).body())).isEqualTo(7_200_000L);
    }

    @Test
    @DisplayName("No data source configured: the records are in the server's default data source, next to the application's tables")
    void zeroConfiguration() throws Exception {
        transfer(id());
        assertThat(count("completedRecords")).isPositive();
    }
}
