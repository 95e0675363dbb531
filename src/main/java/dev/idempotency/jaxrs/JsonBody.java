package dev.idempotency.jaxrs;

import jakarta.json.JsonArray;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonException;
import jakarta.json.JsonNumber;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.json.JsonPointer;
import jakarta.json.JsonReader;
import jakarta.json.JsonString;
import jakarta.json.JsonStructure;
import jakarta.json.JsonValue;
import jakarta.json.spi.JsonProvider;

import java.io.ByteArrayInputStream;
import java.util.List;
import java.util.TreeMap;

/**
 * A request body read as JSON, for a key in a body field ({@code keyFrom}) and a fingerprint of chosen
 * fields ({@code fingerprintFields}): JSON-P, the JSON Pointers compiled once per resource method.
 */
final class JsonBody {

    private static volatile JsonProvider provider;

    private final List<String> fields;
    private final List<JsonPointer> fieldPointers;
    private final String keyField;
    private final JsonPointer keyPointer;

    JsonBody(String keyField, List<String> fields) {
        JsonProvider p = provider();
        this.keyField = keyField;
        this.keyPointer = keyField.isEmpty() ? null : p.createPointer(keyField);
        this.fields = List.copyOf(fields);
        this.fieldPointers = fields.stream().map(p::createPointer).toList();
    }

    private static JsonProvider provider() {
        JsonProvider p = provider;
        if (p == null) {
            p = JsonProvider.provider();
            provider = p;
        }
        return p;
    }

    /** The body as JSON, or {@code null} when it is empty or not JSON. */
    static JsonStructure parse(byte[] body) {
        if (body.length == 0) {
            return null;
        }
        try (JsonReader reader = provider().createReader(new ByteArrayInputStream(body))) {
            return reader.read();
        } catch (JsonException | IllegalStateException e) {
            return null;
        }
    }

    /** The key field's value, or {@code null} when the body has no such field. */
    JsonValue key(JsonStructure json) {
        return valueAt(keyPointer, json);
    }

    /**
     * The value at the pointer, or {@code null} when there is none: JSON-P's {@code containsValue} throws instead when
     * a parent of the field is missing ({@code /order/id} in {@code {}}) or is not a structure.
     */
    private static JsonValue valueAt(JsonPointer pointer, JsonStructure json) {
        try {
            return pointer.containsValue(json) ? pointer.getValue(json) : null;
        } catch (JsonException e) {
            return null;
        }
    }

    String keyField() {
        return keyField;
    }

    /** A key from a string or a number; {@code null} for any other JSON value. */
    static String keyText(JsonValue value) {
        if (value instanceof JsonString s) {
            return s.getString();
        }
        if (value instanceof JsonNumber n) {
            return n.toString();
        }
        return null;
    }

    boolean fingerprintsFields() {
        return !fields.isEmpty();
    }

    /** The first fingerprint field the body lacks, or {@code null}. */
    String missingField(JsonStructure json) {
        for (int i = 0; i < fields.size(); i++) {
            if (valueAt(fieldPointers.get(i), json) == null) {
                return fields.get(i);
            }
        }
        return null;
    }

    /** Each chosen field as its pointer and its value in canonical JSON (members sorted), to be fingerprinted. */
    void addFields(dev.idempotency.core.Fingerprint fingerprint, JsonStructure json) {
        for (int i = 0; i < fields.size(); i++) {
            fingerprint.add(fields.get(i)).add(canonical(fieldPointers.get(i).getValue(json)).toString()
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
    }

    /** The value with every object's members in name order: equal data, equal text, however it was sent. */
    static JsonValue canonical(JsonValue value) {
        if (value instanceof JsonObject object) {
            JsonObjectBuilder b = provider().createObjectBuilder();
            new TreeMap<>(object).forEach((name, v) -> b.add(name, canonical(v)));
            return b.build();
        }
        if (value instanceof JsonArray array) {
            JsonArrayBuilder b = provider().createArrayBuilder();
            array.forEach(v -> b.add(canonical(v)));
            return b.build();
        }
        return value;
    }
}
