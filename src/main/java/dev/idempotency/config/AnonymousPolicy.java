package dev.idempotency.config;

import java.util.Locale;

/**
 * What the HTTP door does with a keyed request that has no authenticated principal (the guide's Security page,
 * docs/security.adoc): {@code allow} (one shared {@code anonymous} scope), {@code reject} ({@code 401}), or
 * {@code header:<name>} (the scope is the value of that request header, an API client id:
 * {@code anonymous:<value>}; a request without it is {@code 401}).
 *
 * @param mode   which of the three
 * @param header the request header naming the client, for {@link Mode#HEADER}; else {@code null}
 */
public record AnonymousPolicy(Mode mode, String header) {

    /** The three policies. */
    public enum Mode {
        ALLOW, REJECT, HEADER
    }

    /** The principal part of a key from a client header: {@code anonymous:} and the header's value. */
    public static final String CLIENT_PREFIX = "anonymous:";

    /** The longest client id a header may carry: the principal column's 200 characters, less the prefix. */
    public static final int MAX_CLIENT_ID = 200 - CLIENT_PREFIX.length();

    public static final AnonymousPolicy ALLOW = new AnonymousPolicy(Mode.ALLOW, null);

    /** {@code allow}, {@code reject} or {@code header:<HTTP header name>}. */
    static AnonymousPolicy parse(String key, String value) {
        String v = value.strip();
        String lower = v.toLowerCase(Locale.ROOT);
        if (lower.equals("allow")) {
            return ALLOW;
        }
        if (lower.equals("reject")) {
            return new AnonymousPolicy(Mode.REJECT, null);
        }
        if (lower.startsWith("header:")) {
            String name = v.substring("header:".length()).strip();
            if (name.length() > ConfigValues.MAX_HEADER_NAME || !name.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]+")) {
                throw new IllegalArgumentException(key + "=" + ConfigValues.shown(value) + " is not header:<request header name>: '"
                        + ConfigValues.shown(name) + "' is not an HTTP header name");
            }
            return new AnonymousPolicy(Mode.HEADER, name);
        }
        throw new IllegalArgumentException(key + "=" + ConfigValues.shown(value) + " must be allow, reject or header:<request header name>"
                + " (for example header:X-Client-Id)");
    }

    @Override
    public String toString() {
        return mode == Mode.HEADER ? "header:" + header : mode.name().toLowerCase(Locale.ROOT);
    }
}
