package dev.idempotency.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.idempotency.core.Fingerprint;
import jakarta.json.JsonStructure;
import jakarta.json.JsonValue;

import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * JSON request bodies read by JSON Pointer ({@code dev.idempotency.jaxrs.JsonBody}, for {@code keyFrom} and
 * {@code fingerprintFields}). Input: the pointer, a newline, the body. The contract: a pointer the deployment check
 * ({@code MethodSettingsResolver.jsonPointer}) accepts compiles, one it refuses is an IllegalArgumentException naming
 * the member (which deployment turns into a configuration error); any body parses to JSON or to {@code null} (the
 * filter's 400 body-invalid), never an exception; the key and the fingerprint fields are found or are {@code null}
 * (400 key-missing or body-field-missing), never an exception; a key is a string or a number's text; the canonical
 * form is stable (canonical of its own text is itself) so the fingerprint of a re-sent equal body is equal.
 */
class JsonBodyFuzzTest {

    private static final Class<?> JSON_BODY = Internals.type("dev.idempotency.jaxrs.JsonBody");
    private static final Constructor<?> NEW = Internals.constructor(JSON_BODY, String.class, List.class);
    private static final Method PARSE = Internals.method(JSON_BODY, "parse", byte[].class);
    private static final Method KEY = Internals.method(JSON_BODY, "key", JsonStructure.class);
    private static final Method KEY_TEXT = Internals.method(JSON_BODY, "keyText", JsonValue.class);
    private static final Method MISSING = Internals.method(JSON_BODY, "missingField", JsonStructure.class);
    private static final Method ADD_FIELDS = Internals.method(JSON_BODY, "addFields", Fingerprint.class, JsonStructure.class);
    private static final Method CANONICAL = Internals.method(JSON_BODY, "canonical", JsonValue.class);
    private static final Method POINTER = Internals.method(Internals.type("dev.idempotency.config.MethodSettingsResolver"),
            "jsonPointer", String.class, String.class);

    @FuzzTest(maxDuration = Internals.MAX_DURATION)
    void body(byte[] input) {
        int newline = indexOf(input, (byte) '\n');
        String pointer = newline < 0 ? "/id" : new String(input, 0, newline, StandardCharsets.UTF_8);
        byte[] body = newline < 0 ? input : java.util.Arrays.copyOfRange(input, newline + 1, input.length);

        Object reader;
        try {
            Internals.call(POINTER, null, "keyFrom", pointer);
            reader = Internals.create(NEW, pointer, List.of(pointer));
        } catch (IllegalArgumentException e) {
            assertThat(e.getMessage()).startsWith("keyFrom=");
            reader = null;
        }

        JsonStructure json = Internals.call(PARSE, null, (Object) body);
        if (json == null) {
            return; // the filter answers 400 body-invalid
        }
        JsonValue canonical = Internals.call(CANONICAL, null, json);
        String text = canonical.toString();
        if (hasLoneSurrogate(text)) {
            // Found by fuzzing, left open: a string escaped as an unpaired surrogate (\ud832) has no UTF-8 form, so
            // its fingerprint bytes carry '?' instead (FuzzFindingsTest pins it). The rest of the contract still holds.
            if (reader != null) {
                Internals.call(KEY, reader, json);
                Internals.call(MISSING, reader, json);
            }
            return;
        }
        JsonStructure again = Internals.call(PARSE, null, (Object) text.getBytes(StandardCharsets.UTF_8));
        assertThat(again).as("the canonical text parses").isNotNull();
        assertThat(Internals.<JsonValue>call(CANONICAL, null, again).toString()).isEqualTo(text);

        if (reader == null) {
            return;
        }
        JsonValue key = Internals.call(KEY, reader, json);
        if (key != null) {
            String keyText = Internals.call(KEY_TEXT, null, key);
            if (key.getValueType() == JsonValue.ValueType.STRING || key.getValueType() == JsonValue.ValueType.NUMBER) {
                assertThat(keyText).isNotNull();
            } else {
                assertThat(keyText).isNull();
            }
        }
        String missing = Internals.call(MISSING, reader, json);
        assertThat(missing == null).isEqualTo(key != null);
        if (missing == null) {
            // one fingerprint at a time on a thread (Fingerprint's digest is per thread)
            Fingerprint first = Fingerprint.start();
            Internals.call(ADD_FIELDS, reader, first, json);
            String firstHex = first.hex();
            Fingerprint second = Fingerprint.start();
            Internals.call(ADD_FIELDS, reader, second, again);
            assertThat(second.hex()).as("an equal body re-sent in canonical form").isEqualTo(firstHex);
        } else {
            assertThat(missing).isEqualTo(pointer);
        }
    }

    static boolean hasLoneSurrogate(String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                i++;
            } else if (Character.isSurrogate(c)) {
                return true;
            }
        }
        return false;
    }

    private static int indexOf(byte[] bytes, byte b) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }
}
