package dev.idempotency.config;

import java.util.BitSet;
import java.util.Locale;

/**
 * A set of HTTP statuses, written as classes ({@code 2xx}) and codes ({@code 409}), comma-separated; a class or a code
 * after {@code !} is left out, wherever it stands ({@code 4xx,!429}: every 4xx but 429).
 */
public final class StatusSet {

    private final BitSet statuses;
    private final String text;

    private StatusSet(BitSet statuses, String text) {
        this.statuses = statuses;
        this.text = text;
    }

    public static StatusSet parse(String key, String value) {
        BitSet set = new BitSet(600);
        BitSet excluded = new BitSet(600);
        for (String part : value.split(",")) {
            String p = part.strip().toLowerCase(Locale.ROOT);
            boolean not = p.startsWith("!");
            String s = not ? p.substring(1).strip() : p;
            BitSet into = not ? excluded : set;
            if (s.matches("[1-5]xx")) {
                int base = (s.charAt(0) - '0') * 100;
                into.set(base, base + 100);
            } else if (s.matches("[1-5][0-9][0-9]")) {
                into.set(Integer.parseInt(s));
            } else if (!p.isEmpty()) {
                throw new IllegalArgumentException(key + "=" + ConfigValues.shown(value) + ": '" + ConfigValues.shown(part.strip())
                        + "' is neither a status class (2xx) nor a status code (409), nor one of them after '!' (left out)");
            }
        }
        set.andNot(excluded);
        if (set.isEmpty()) {
            throw new IllegalArgumentException(key + "=" + ConfigValues.shown(value) + " names no status");
        }
        return new StatusSet(set, value.strip());
    }

    public boolean contains(int status) {
        return status >= 0 && status < 600 && statuses.get(status);
    }

    @Override
    public String toString() {
        return text;
    }
}
