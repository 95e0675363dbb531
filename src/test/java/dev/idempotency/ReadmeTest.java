package dev.idempotency;

import dev.idempotency.config.ConfigErrors;
import dev.idempotency.config.ConfigKey;
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
        Map<String, String> expected = new LinkedHashMap<>();
        for (ConfigKey k : ConfigKey.values()) {
            expected.put(k.key(), k.documentedDefault().isEmpty() ? "none" : "`" + k.documentedDefault() + "`");
        }
        Map<String, String> rows = configRows();
        rows.remove("idempotency.jpa.*");
        assertThat(rows).containsExactlyInAnyOrderEntriesOf(expected);
    }

    /** The table's defaults are what the reader uses: each parses, and a deployment with none configured gets them. */
    @Test
    void theTablesDefaultsAreTheReadersDefaults() {
        ConfigErrors errors = new ConfigErrors();
        GlobalSettings d = GlobalSettings.read(IdempotencyWeld.config(Map.of()), errors);
        assertThat(errors.all()).isEmpty();
        assertThat(d.ttl()).hasToString(ConfigKey.TTL.defaultValue());
        assertThat(d.lease()).hasToString(ConfigKey.LEASE.defaultValue());
        assertThat(d.keepStatus()).hasToString(ConfigKey.KEEP_STATUS.defaultValue());
        assertThat(d.interceptorPriority()).hasToString(ConfigKey.INTERCEPTOR_PRIORITY.defaultValue());
        assertThat(d.replayHeaders()).isEqualTo(GlobalSettings.DEFAULT_REPLAY_HEADERS);
        assertThat(d.claim()).isEqualTo(dev.idempotency.ClaimMode.DEFAULT);
        assertThat(d.nodeId()).matches(".+-.+-[0-9a-f]{8}");
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

    @Test
    void theFunctionalApisOptionsTableListsEveryOption() {
        Set<String> inCode = java.util.Arrays.stream(dev.idempotency.IdempotencyOptions.class.getRecordComponents())
                .map(java.lang.reflect.RecordComponent::getName).collect(Collectors.toCollection(TreeSet::new));
        Set<String> inReadme = new TreeSet<>();
        Matcher m = Pattern.compile("(?m)^\\| `(\\w+)` \\|").matcher(section("Without an annotation"));
        while (m.find()) {
            inReadme.add(m.group(1));
        }
        assertThat(inReadme).isEqualTo(inCode);
    }
}
