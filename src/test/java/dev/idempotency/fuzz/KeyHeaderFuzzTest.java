package dev.idempotency.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.idempotency.config.AnonymousPolicy;
import dev.idempotency.core.KeyRules;
import jakarta.ws.rs.core.Response;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code Idempotency-Key} header as the HTTP filter reads it: the value stripped and unquoted
 * ({@code IdempotencyHttpFilter.unquote}: a structured-field string or a bare token), then {@link KeyRules#problem}
 * against the configured maximum; the anonymous client-id header goes through the same rules. The contract: a key
 * is accepted exactly when it is 1 to the maximum printable ASCII characters; a refusal is one of KeyRules' three
 * answers, never echoes the key, and becomes a 400 {@code application/problem+json}; a valid key sent as a
 * structured-field string comes back unchanged. Input: one byte, the maximum length (1 to 255); the rest, the header
 * value as the server decodes it (ISO-8859-1).
 */
class KeyHeaderFuzzTest {

    private static final Method UNQUOTE = Internals.method(Internals.type("dev.idempotency.jaxrs.IdempotencyHttpFilter"),
            "unquote", String.class);
    private static final Method KEY_INVALID = Internals.method(Internals.type("dev.idempotency.jaxrs.Problems"),
            "keyInvalid", String.class, String.class, int.class);
    private static final Pattern PROBLEMS = Pattern.compile("is empty"
            + "|is \\d+ characters long; at most \\d+ are allowed"
            + "|has a character outside printable ASCII at position \\d+");

    @FuzzTest(maxDuration = Internals.MAX_DURATION)
    void header(byte[] input) {
        int max = input.length == 0 ? 255 : 1 + (input[0] & 0xFF) % 255;
        String value = new String(input, Math.min(1, input.length), Math.max(0, input.length - 1), StandardCharsets.ISO_8859_1);

        String key = Internals.call(UNQUOTE, null, value.strip());
        assertContract(key, max, KeyRules.problem(key, max));
        assertContract(key, AnonymousPolicy.MAX_CLIENT_ID, KeyRules.problem(key, AnonymousPolicy.MAX_CLIENT_ID));

        String problem = KeyRules.problem(key, max);
        if (problem != null) {
            Response r = Internals.call(KEY_INVALID, null, "Idempotency-Key", problem, max);
            assertThat(r.getStatus()).isEqualTo(400);
            assertThat(r.getMediaType()).hasToString("application/problem+json");
            assertThat((String) r.getEntity()).as("the detail names the configured maximum").contains("1 to " + max + " printable");
        } else {
            // the same key sent as a structured-field string: the filter reads the same key
            String quoted = "\"" + key.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
            assertThat(Internals.<String>call(UNQUOTE, null, quoted)).isEqualTo(key);
        }
    }

    private static final Method CONTENT_LENGTH = Internals.method(Internals.type("dev.idempotency.jaxrs.IdempotencyHttpFilter"),
            "contentLength", String.class);

    /**
     * The Content-Length the filter compares with a method's maxRequestSize, before it reads a body: -1 for none or a
     * malformed one (the body is then read up to the cap, never further), the number for digits, the largest long for
     * digits too many for one (so that it is over every cap). Never an exception. Input: the header value (ISO-8859-1).
     */
    @FuzzTest(maxDuration = Internals.MAX_DURATION)
    void contentLength(byte[] input) {
        String value = new String(input, StandardCharsets.ISO_8859_1);
        long length = Internals.<Long>call(CONTENT_LENGTH, null, value);
        String digits = value.strip();
        if (digits.isEmpty() || !digits.chars().allMatch(c -> c >= '0' && c <= '9')) {
            assertThat(length).isEqualTo(-1L);
        } else {
            java.math.BigInteger n = new java.math.BigInteger(digits);
            assertThat(length).isEqualTo(n.bitLength() < 64 ? n.longValueExact() : Long.MAX_VALUE);
        }
    }

    private static void assertContract(String key, int max, String problem) {
        boolean valid = !key.isEmpty() && key.length() <= max && key.chars().allMatch(c -> c >= 0x20 && c <= 0x7E);
        if (valid) {
            assertThat(problem).as("a valid key of %d characters", key.length()).isNull();
            return;
        }
        // one of three fixed sentences with numbers in them: there is no room for the key to be echoed
        assertThat(problem).as("an invalid key").isNotNull().matches(PROBLEMS);
    }
}
