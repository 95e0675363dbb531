package dev.idempotency.config;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;

/** Strict parsing of configuration values; a bad value names its key and what is expected. */
final class ConfigValues {

    /** The longest header name taken (servers refuse a request head of a few KiB). */
    static final int MAX_HEADER_NAME = 100;
    /** The longest name (a JNDI name, a persistence unit, a cluster, a host) and the longest path taken. */
    static final int MAX_NAME = 255;
    static final int MAX_PATH = 1024;
    /** The longest password taken. */
    static final int MAX_SECRET = 1024;
    private static final int SHOWN = 100;

    private ConfigValues() {
    }

    /** A value as an error shows it: control characters escaped, at most 100 characters, and its length when cut. */
    static String shown(String value) {
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < value.length() && out.length() < SHOWN; i++) {
            char c = value.charAt(i);
            out.append(Character.isISOControl(c) ? String.format("\\u%04x", (int) c) : String.valueOf(c));
        }
        return out.length() < SHOWN && out.length() >= value.length() ? out.toString()
                : out + "... (" + value.length() + " characters)";
    }

    /**
     * A name, an address or a path: stripped, printable ASCII only (spaces inside allowed), at most {@code max}
     * characters; blank is the empty string, which is refused where {@code required}.
     */
    static String text(String key, String value, int max, boolean required) {
        String v = value.strip();
        if (v.isEmpty() && required) {
            throw new IllegalArgumentException(key + " must not be blank");
        }
        if (v.length() > max) {
            throw new IllegalArgumentException(key + "=" + shown(value) + " is longer than " + max + " characters");
        }
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            if (c < 0x20 || c > 0x7E) {
                throw new IllegalArgumentException(key + "=" + shown(value) + " must be printable ASCII (it has "
                        + (c < 0x20 || c == 0x7F ? "a control character" : "'" + c + "'") + " at " + (i + 1) + ")");
            }
        }
        return v;
    }

    /** A password: any characters but control characters, at most {@value #MAX_SECRET}; never shown in an error. */
    static String secret(String key, String value) {
        if (value.length() > MAX_SECRET) {
            throw new IllegalArgumentException(key + " is longer than " + MAX_SECRET + " characters");
        }
        if (value.chars().anyMatch(Character::isISOControl)) {
            throw new IllegalArgumentException(key + " has a control character");
        }
        return value;
    }

    static Duration duration(String key, String value, boolean allowZero) {
        Duration d;
        try {
            d = Duration.parse(value.strip());
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException(key + "=" + shown(value) + " is not an ISO-8601 duration (for example PT30S, PT24H, P7D)");
        }
        if (d.isNegative() || (!allowZero && d.isZero())) {
            throw new IllegalArgumentException(key + "=" + shown(value) + " must be " + (allowZero ? "zero or more" : "positive"));
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
        throw new IllegalArgumentException(key + "=" + shown(value) + " must be true or false");
    }

    static int integer(String key, String value, int min, int max) {
        int i;
        try {
            i = Integer.parseInt(value.strip());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(key + "=" + shown(value) + " must be a whole number");
        }
        if (i < min || i > max) {
            throw new IllegalArgumentException(key + "=" + shown(value) + " must be between " + min + " and " + max);
        }
        return i;
    }

    static String headerName(String key, String value) {
        String h = value.strip();
        if (h.length() > MAX_HEADER_NAME || !h.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) {
            throw new IllegalArgumentException(key + "=" + shown(value) + " is not an HTTP header name");
        }
        return h;
    }

    /** A Java class's binary name ({@code com.acme.ApiFilter}, {@code com.acme.Outer$Inner}), or empty when blank. */
    static String className(String key, String value) {
        String v = text(key, value, MAX_NAME, false);
        if (!v.isEmpty() && !v.matches("[A-Za-z_$][A-Za-z0-9_$]*(\\.[A-Za-z_$][A-Za-z0-9_$]*)*")) {
            throw new IllegalArgumentException(key + "=" + shown(value) + " is not a Java class name");
        }
        return v;
    }

    static String oneOf(String key, String value, String... allowed) {
        String v = value.strip().toLowerCase(Locale.ROOT);
        for (String a : allowed) {
            if (a.equals(v)) {
                return a;
            }
        }
        throw new IllegalArgumentException(key + "=" + shown(value) + " must be one of " + String.join(", ", allowed));
    }
}
