package dev.idempotency.config;

import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.testing.IdempotencyWeld;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every configuration key of the table ({@link ConfigKey}, so a new key is covered the day it is added) given hostile
 * values, through the real MicroProfile Config (SmallRye): blank, huge, a control character, non-ASCII, negative,
 * non-numeric, a number too large. Whatever the key, reading never throws and never echoes a huge value; a refusal is
 * an {@link IdempotencyConfigurationException} (a deployment failure) that names the key. What must be refused:
 * <ul>
 * <li>a huge value (100,000 characters) and a control character, by every key;</li>
 * <li>non-ASCII, by every key but the passwords ({@link #ANY_TEXT}: a password may be any text);</li>
 * <li>blank, by every key whose default is not empty (an empty default means "none", and blank says the same);</li>
 * <li>negative, non-numeric and too-large values, by every key whose default is a number, a duration or a boolean.</li>
 * </ul>
 * A name (a data source, a cluster, a host) may be "-1" or "ten": such keys accept them.
 */
class HostileConfigurationTest {

    /** Passwords: any text but control characters, up to 1,024 characters. */
    static final Set<ConfigKey> ANY_TEXT = Set.of(ConfigKey.CACHE_KEYSTORE_PASSWORD, ConfigKey.CACHE_REMOTE_PASSWORD,
            ConfigKey.CACHE_REMOTE_TRUST_STORE_PASSWORD);

    static final Map<String, String> HOSTILE = new LinkedHashMap<>();

    static {
        HOSTILE.put("blank", "   ");
        HOSTILE.put("huge", "x".repeat(100_000));
        HOSTILE.put("a control character", "ab\u0000cd");
        HOSTILE.put("non-ASCII", "z\u00e4hler-\u2713");
        HOSTILE.put("negative", "-1");
        HOSTILE.put("a negative duration", "-PT5S");
        HOSTILE.put("non-numeric", "ten");
        HOSTILE.put("a number too large", "9".repeat(30));
    }

    enum Kind { NUMBER, DURATION, BOOLEAN, TEXT }

    /** What the documented default says the key holds. */
    static Kind kind(ConfigKey key) {
        String d = key.defaultValue() == null ? "" : key.defaultValue();
        if (d.matches("\\d+")) {
            return Kind.NUMBER;
        }
        if (d.equals("true") || d.equals("false")) {
            return Kind.BOOLEAN;
        }
        try {
            Duration.parse(d);
            return Kind.DURATION;
        } catch (RuntimeException e) {
            return Kind.TEXT;
        }
    }

    static boolean mustRefuse(ConfigKey key, String what) {
        return switch (what) {
            case "huge", "a control character" -> true;
            case "non-ASCII" -> !ANY_TEXT.contains(key);
            case "blank" -> key.defaultValue() == null || !key.defaultValue().isEmpty();
            default -> kind(key) != Kind.TEXT;
        };
    }

    @TestFactory
    List<DynamicTest> everyKeyRefusesHostileValuesNamingTheKey() {
        List<DynamicTest> tests = new ArrayList<>();
        for (ConfigKey key : ConfigKey.values()) {
            for (Map.Entry<String, String> hostile : HOSTILE.entrySet()) {
                String what = hostile.getKey();
                String value = hostile.getValue();
                tests.add(DynamicTest.dynamicTest(key.key() + ", " + what, () -> {
                    ConfigErrors errors = new ConfigErrors();
                    GlobalSettings.read(IdempotencyWeld.config(Map.of(key.key(), value)), errors);
                    if (mustRefuse(key, what)) {
                        assertThat(errors.all()).as(key.key() + " with " + what + " fails the deployment").isNotEmpty();
                    }
                    for (IdempotencyConfigurationException e : errors.all()) {
                        assertThat(e.getMessage()).as("the error names the key").contains(key.key());
                        assertThat(e.getMessage().length()).as("the error does not echo a huge value").isLessThan(1_000);
                        if ((ANY_TEXT.contains(key) || key == ConfigKey.CACHE_SECRET) && value.strip().length() > 5) {
                            assertThat(e.getMessage()).as("a secret is never echoed").doesNotContain(value.strip());
                        }
                    }
                }));
            }
        }
        return tests;
    }
}
