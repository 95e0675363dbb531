package dev.idempotency.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.idempotency.IdempotencyException;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The stored form of an HTTP response ({@code dev.idempotency.jaxrs.StoredHttpResponse}). Arbitrary stored bytes
 * decode or are refused with {@link IdempotencyException} (never another exception, an OutOfMemoryError or a huge
 * allocation); what decodes re-encodes to a form that decodes equal. The input read as a response (status, headers,
 * body) is made storable and round-trips exactly.
 */
class StoredHttpResponseFuzzTest {

    private static final Class<?> STORED = Internals.type("dev.idempotency.jaxrs.StoredHttpResponse");
    private static final Method DECODE = Internals.method(STORED, "decode", byte[].class);
    private static final Method ENCODE = Internals.method(STORED, "encode");
    private static final Method STORABLE = Internals.method(STORED, "storable", int.class, List.class, byte[].class, boolean.class);
    private static final Method STATUS = Internals.method(STORED, "status");
    private static final Method HEADERS = Internals.method(STORED, "headers");
    private static final Method BODY = Internals.method(STORED, "body");
    private static final Method OMITTED = Internals.method(STORED, "bodyOmitted");

    @FuzzTest(maxDuration = Internals.MAX_DURATION)
    void stored(byte[] input) {
        // 1. The input as stored bytes
        Object decoded = null;
        try {
            decoded = Internals.call(DECODE, null, (Object) input);
        } catch (IdempotencyException e) {
            // the documented refusal
        }
        if (decoded != null) {
            byte[] again = Internals.call(ENCODE, decoded);
            assertEqual(Internals.call(DECODE, null, (Object) again), decoded);
        }

        // 2. The input as a response
        Input in = new Input(input);
        int status = 100 + in.u8() * 2 % 500;
        boolean omitted = (in.u8() & 1) == 1;
        int n = in.u8() % 8;
        List<Map.Entry<String, String>> headers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            headers.add(Map.entry(in.string(), in.string()));
        }
        byte[] body = in.rest();
        Object response = Internals.call(STORABLE, null, status, List.copyOf(headers), body, omitted);
        Object back = Internals.call(DECODE, null, (Object) Internals.call(ENCODE, response));
        assertEqual(back, response);
        assertThat(Internals.<Integer>call(STATUS, back)).isEqualTo(status);
        assertThat(Internals.<List<?>>call(HEADERS, back)).isEqualTo(headers);
        assertThat(Internals.<byte[]>call(BODY, back)).isEqualTo(body);
        assertThat(Internals.<Boolean>call(OMITTED, back)).isEqualTo(omitted);
    }

    private static void assertEqual(Object a, Object b) {
        assertThat(Internals.<Integer>call(STATUS, a)).isEqualTo(Internals.<Integer>call(STATUS, b));
        assertThat(Internals.<List<?>>call(HEADERS, a)).isEqualTo(Internals.<List<?>>call(HEADERS, b));
        assertThat(Internals.<byte[]>call(BODY, a)).isEqualTo(Internals.<byte[]>call(BODY, b));
        assertThat(Internals.<Boolean>call(OMITTED, a)).isEqualTo(Internals.<Boolean>call(OMITTED, b));
    }
}
