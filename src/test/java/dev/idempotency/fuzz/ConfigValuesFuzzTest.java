package dev.idempotency.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.config.ConfigErrors;
import dev.idempotency.config.ConfigKey;
import dev.idempotency.config.GlobalSettings;
import dev.idempotency.config.StatusSet;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigValue;
import org.eclipse.microprofile.config.spi.ConfigSource;
import org.eclipse.microprofile.config.spi.Converter;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * MicroProfile Config values ({@code GlobalSettings.read}: {@code ConfigValues}' durations, numbers, booleans,
 * header names and choices, {@link StatusSet}, the anonymous policy, the cache secret, host lists). Input: one byte
 * chooses the key, the rest (UTF-8) is its value. The contract: {@code read} never throws; a value is accepted
 * without an error, or refused with an {@link IdempotencyConfigurationException} that names the key (and the default
 * is used); a secret is never echoed. {@link StatusSet#parse} alone: a set, or an IllegalArgumentException naming the
 * key. Keys whose value is a file that is opened (idempotency.cache.keystore) are left out: reading an arbitrary path
 * is not parsing.
 */
class ConfigValuesFuzzTest {

    private static final List<ConfigKey> KEYS = Arrays.stream(ConfigKey.values())
            .filter(k -> k != ConfigKey.CACHE_KEYSTORE).toList();

    @FuzzTest(maxDuration = Internals.MAX_DURATION)
    void value(byte[] input) {
        if (input.length == 0) {
            return;
        }
        ConfigKey key = KEYS.get((input[0] & 0xFF) % KEYS.size());
        String value = new String(input, 1, input.length - 1, StandardCharsets.UTF_8);

        ConfigErrors errors = new ConfigErrors();
        GlobalSettings.read(new MapConfig(Map.of(key.key(), value)), errors);
        for (IdempotencyConfigurationException e : errors.all()) {
            assertThat(e.getMessage()).as("the error names the key").contains(key.key());
        }
        if (key == ConfigKey.CACHE_SECRET) {
            // not echoed: another secret of the same shape (its length, its blanks and its control characters where
            // they are) gets the same messages, word for word
            StringBuilder other = new StringBuilder(value);
            for (int i = 0; i < other.length(); i++) {
                if (!Character.isWhitespace(other.charAt(i)) && !Character.isISOControl(other.charAt(i))) {
                    other.setCharAt(i, other.charAt(i) == 'x' ? 'y' : 'x');
                }
            }
            ConfigErrors otherErrors = new ConfigErrors();
            GlobalSettings.read(new MapConfig(Map.of(key.key(), other.toString())), otherErrors);
            assertThat(otherErrors.all()).extracting(Throwable::getMessage).as("the secret is not echoed")
                    .isEqualTo(errors.all().stream().map(Throwable::getMessage).toList());
        }
        if (errors.isEmpty()) {
            return;
        }
        assertThatThrownBy(errors::throwIfAny).isInstanceOf(IdempotencyConfigurationException.class);

        try {
            StatusSet set = StatusSet.parse(ConfigKey.KEEP_STATUS.key(), value);
            assertThat(set.contains(-1)).isFalse();
            assertThat(set.contains(600)).isFalse();
        } catch (IllegalArgumentException e) {
            assertThat(e.getMessage()).startsWith(ConfigKey.KEEP_STATUS.key() + "=");
        }
    }

    /** A configuration of one source and these values (MicroProfile Config: an empty value is no value). */
    record MapConfig(Map<String, String> values) implements Config {

        @Override
        public <T> T getValue(String name, Class<T> type) {
            return getOptionalValue(name, type).orElseThrow(() -> new NoSuchElementException(name));
        }

        @Override
        public ConfigValue getConfigValue(String name) {
            throw new UnsupportedOperationException();
        }

        @Override
        public <T> Optional<T> getOptionalValue(String name, Class<T> type) {
            if (type != String.class) {
                throw new UnsupportedOperationException(type.getName());
            }
            String v = values.get(name);
            return v == null || v.isEmpty() ? Optional.empty() : Optional.of(type.cast(v));
        }

        @Override
        public Iterable<String> getPropertyNames() {
            return values.keySet();
        }

        @Override
        public Iterable<ConfigSource> getConfigSources() {
            return List.of(new ConfigSource() {
                @Override
                public Set<String> getPropertyNames() {
                    return values.keySet();
                }

                @Override
                public String getValue(String name) {
                    return values.get(name);
                }

                @Override
                public String getName() {
                    return "fuzz";
                }
            });
        }

        @Override
        public <T> Optional<Converter<T>> getConverter(Class<T> type) {
            return Optional.empty();
        }

        @Override
        public <T> T unwrap(Class<T> type) {
            throw new IllegalArgumentException(type.getName());
        }
    }
}
