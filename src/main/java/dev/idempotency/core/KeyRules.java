package dev.idempotency.core;

/** The syntax of a key: 1 to the configured maximum of printable ASCII characters. */
public final class KeyRules {

    private KeyRules() {
    }

    /** What is wrong with the key, or {@code null} when nothing is. Never echoes the key. */
    public static String problem(String key, int maxLength) {
        if (key.isEmpty()) {
            return "is empty";
        }
        if (key.length() > maxLength) {
            return "is " + key.length() + " characters long; at most " + maxLength + " are allowed";
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x20 || c > 0x7E) {
                return "has a character outside printable ASCII at position " + (i + 1);
            }
        }
        return null;
    }
}
