package dev.idempotency;

import dev.idempotency.config.ConfigErrors;
import dev.idempotency.config.GlobalSettings;
import dev.idempotency.testing.IdempotencyWeld;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** The README's configuration and exception tables stay true to the code. */
class ReadmeTest {

    static final String README = read();

    static String read() {
        try {
            return Files.readString(Path.of("README.md"));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The text of one "## " section. */
    static String section(String title) {
        int start = README.indexOf("\n## " + title);
        int end = README.indexOf("\n## ", start + 4);
        return README.substring(start, end < 0 ? README.length() : end);
    }

    /** Rows of the configuration table: key to default. */
    static Map<String, String> configRows() {
        Map<String, String> rows = new LinkedHashMap<>();
        Matcher m = Pattern.compile("(?m)^\\| `(idempotency\\.[a-z.-]+)` \\| ([^|]+) \\|").matcher(section("Configuration"));
        while (m.find()) {
            rows.put(m.group(1), m.group(2).strip());
        }
        return rows;
    }

    @Test
    void theConfigurationTableListsEveryKeyAndNoOther() {
        assertThat(configRows().keySet()).containsExactlyInAnyOrderElementsOf(GlobalSettings.KEYS);
    }

    @Test
    void theConfigurationTableStatesTheDefaults() {
        GlobalSettings d = GlobalSettings.read(IdempotencyWeld.config(Map.of()), new ConfigErrors());
        Map<String, String> expected = new LinkedHashMap<>();
        expected.put("idempotency.ttl", "`" + d.ttl() + "`");
        expected.put("idempotency.lease", "`" + d.lease() + "`");
        expected.put("idempotency.lease-renewal-limit", "`" + d.leaseRenewalLimit() + "`");
        expected.put("idempotency.on-concurrent", "`" + d.onConcurrent().name().toLowerCase() + "`");
        expected.put("idempotency.wait-timeout", "`" + d.waitTimeout() + "`");
        expected.put("idempotency.required", "`" + d.required() + "`");
        expected.put("idempotency.scope-by-principal", "`" + d.scopeByPrincipal() + "`");
        expected.put("idempotency.max-key-length", "`" + d.maxKeyLength() + "`");
        expected.put("idempotency.store", "`" + d.store() + "`");
        expected.put("idempotency.persistence-unit", "none");
        expected.put("idempotency.datasource", "`" + d.datasource() + "`");
        expected.put("idempotency.schema", "`" + d.schema() + "`");
        expected.put("idempotency.lock-timeout", "`" + d.lockTimeout() + "`");
        expected.put("idempotency.claim", d.claim() == dev.idempotency.ClaimMode.DEFAULT ? "`auto`" : "?");
        expected.put("idempotency.claim-lock-timeout", "`" + d.claimLockTimeout() + "`");
        expected.put("idempotency.purge.interval", "`" + d.purgeInterval() + "`");
        expected.put("idempotency.purge.batch-size", "`" + d.purgeBatchSize() + "`");
        expected.put("idempotency.interceptor.priority", "`" + d.interceptorPriority() + "`");
        expected.put("idempotency.node-id", "`<host>-<pid>-<random>`");
        expected.put("idempotency.header", "`" + d.header() + "`");
        expected.put("idempotency.keep-status", "`" + d.keepStatus() + "`");
        expected.put("idempotency.replay-headers", d.replayHeaders().equals(GlobalSettings.DEFAULT_REPLAY_HEADERS) ? "none" : "?");
        expected.put("idempotency.max-response-size", "`" + d.maxResponseSize() + "`");
        expected.put("idempotency.fail-open", "`" + d.failOpen() + "`");
        expected.put("idempotency.cache.mode", "`" + d.cacheMode() + "`");
        expected.put("idempotency.cache.max-entries", "`" + d.cacheMaxEntries() + "`");
        expected.put("idempotency.cache.cluster-name", "`" + d.clusterName() + "`");
        expected.put("idempotency.cache.jgroups-stack", d.jgroupsStack().isEmpty() ? "none" : "?");
        expected.put("idempotency.cache.bind-address", "`" + d.bindAddress() + "`");
        expected.put("idempotency.cache.bind-port", "`" + d.bindPort() + "`");
        expected.put("idempotency.cache.initial-hosts", "`" + d.initialHosts() + "`");
        expected.put("idempotency.health.min-members", "`" + d.healthMinMembers() + "`");
        expected.put("idempotency.request-types.enabled", d.enabledRequestTypes().isEmpty() ? "none" : "?");
        expected.put("idempotency.request-types.disabled", d.disabledRequestTypes().isEmpty() ? "none" : "?");
        expected.put("idempotency.request-types.default", "`" + d.requestTypeDefault() + "`");
        expected.put("idempotency.manager.policy", "`" + d.managerPolicy() + "`");
        expected.put("idempotency.manager.max-age", "`" + d.managerMaxAge() + "`");
        expected.put("idempotency.manager.max-records", "`" + d.managerMaxRecords() + "`");
        expected.put("idempotency.manager.scope-by-principal", "`" + d.managerScopeByPrincipal() + "`");
        Map<String, String> rows = configRows();
        rows.remove("idempotency.jpa.*");
        assertThat(rows).containsExactlyInAnyOrderEntriesOf(expected);
    }

    @Test
    void theMetricsTableListsEveryCounterAndTimer() {
        String operations = section("Operations");
        for (Enum<?> metric : java.util.stream.Stream.concat(
                java.util.Arrays.stream(dev.idempotency.metrics.IdempotencyMetrics.Counter.values()),
                java.util.Arrays.stream(dev.idempotency.metrics.IdempotencyMetrics.Timer.values())).toList()) {
            String name = "idempotency." + metric.name().toLowerCase(java.util.Locale.ROOT).replace('_', '.');
            assertThat(operations).contains("| `" + name + "` |");
        }
    }

    @Test
    void theProblemTypesAreListed() throws Exception {
        for (java.lang.reflect.Field f : Class.forName("dev.idempotency.jaxrs.Problems").getDeclaredFields()) {
            if (f.getType() == String.class && java.lang.reflect.Modifier.isStatic(f.getModifiers())) {
                f.setAccessible(true);
                String value = (String) f.get(null);
                if (value.startsWith("https://") && !value.endsWith("/")) {
                    assertThat(README).contains("| `" + value + "` |");
                }
            }
        }
    }

    @Test
    void theExceptionTableListsEveryException() throws IOException {
        Set<String> inCode;
        try (Stream<Path> files = Files.list(Path.of("src/main/java/dev/idempotency"))) {
            inCode = files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith("Exception.java") && !n.equals("IdempotencyException.java"))
                    .map(n -> n.substring(0, n.length() - ".java".length()))
                    .collect(Collectors.toCollection(TreeSet::new));
        }
        Set<String> inReadme = new TreeSet<>();
        Matcher m = Pattern.compile("(?m)^\\| `(Idempotency\\w+Exception)` \\|").matcher(README);
        while (m.find()) {
            inReadme.add(m.group(1));
        }
        assertThat(inReadme).isEqualTo(inCode);
    }
}
