package dev.idempotency.config;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;

/** Strict parsing of configuration values; a bad value names its key and what is expected. */
final class ConfigValues {

    private ConfigValues() {
    }

    static Duration duration(String key, String value, boolean allowZero) {
        Duration d;
        try {
            d = Duration.parse(value.strip());
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(key + "=" + value + " is not an ISO-8601 duration (for example PT30S, PT24H, P7D)");
        }
        if (d.isNegative() || (!allowZero && d.isZero())) {
            throw new IllegalArgumentException(key + "=" + value + " must be " + (allowZero ? "zero or more" : "positive"));
        }
        return d;
    }

    static boolean bool(String key, String value) {
        String v = value.strip().toLowerCase(Locale.ROOT);
        if (v.equals("true")) {
            return true;
        }
        if (v.equals("false")) {
            return false;
        }
        throw new IllegalArgumentException(key + "=" + value + " must be true or false");
    }

    static int integer(String key, String value, int min, int max) {
        int i;
        try {
            i = Integer.parseInt(value.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + "=" + value + " must be a whole number");
        }
        if (i < min || i > max) {
            throw new IllegalArgumentException(key + "=" + value + " must be between " + min + " and " + max);
        }
        return i;
    }

    static String headerName(String key, String value) {
        String h = value.strip();
        if (!h.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) {
            throw new IllegalArgumentException(key + "=" + value + " is not an HTTP header name");
        }
        return h;
    }

    static String oneOf(String key, String value, String... allowed) {
        String v = value.strip().toLowerCase(Locale.ROOT);
        for (String a : allowed) {
            if (a.equals(v)) {
                return a;
            }
        }
        throw new IllegalArgumentException(key + "=" + value + " must be one of " + String.join(", ", allowed));
    }
}
