package dev.idempotency.runtime;

import dev.idempotency.IdempotencyException;
import dev.idempotency.config.MethodSettings;
import dev.idempotency.core.Fingerprint;

import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.json.bind.JsonbConfig;
import jakarta.json.bind.config.PropertyOrderStrategy;

import java.lang.reflect.Constructor;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;

/**
 * JSON-B for what the interceptor stores (return values, kept failures) and fingerprints (arguments).
 * Properties in lexicographical order, so that equal arguments always serialise to equal bytes. Java
 * serialisation is never used.
 */
public final class JsonCodec implements AutoCloseable {

    private static final byte[] EMPTY = new byte[0];

    private final Jsonb jsonb = JsonbBuilder.create(new JsonbConfig()
            .withPropertyOrderStrategy(PropertyOrderStrategy.LEXICOGRAPHICAL)
            .withFormatting(false));

    /** JSON-P, looked up once (each {@code Json.create...} call looks its provider up again). */
    private final jakarta.json.spi.JsonProvider jsonp = jakarta.json.spi.JsonProvider.provider();

    /** SHA-256 over the method's arguments other than the key, each serialised with its declared type. */
    public String fingerprint(MethodSettings m, Object[] args) {
        Fingerprint f = Fingerprint.start().add(m.namespace());
        Type[] types = m.method().getGenericParameterTypes();
        for (int i = 0; i < args.length; i++) {
            if (i == m.keyIndex()) {
                if (m.keyInside() != null) {
                    // The rest of the argument is the fingerprint.
                    f.add(args[i] == null ? null : withoutKey(canonical(args[i], types[i]), m.keyInside().property())
                            .getBytes(StandardCharsets.UTF_8));
                }
                continue;
            }
            f.add(args[i] == null ? null : canonical(args[i], types[i]).getBytes(StandardCharsets.UTF_8));
        }
        return f.hex();
    }

    /** The argument's JSON without the key's property (when it is an object that has it). */
    String withoutKey(String json, String property) {
        try (jakarta.json.JsonReader reader = jsonp.createReader(new java.io.StringReader(json))) {
            jakarta.json.JsonValue value = reader.readValue();
            if (value instanceof jakarta.json.JsonObject object && object.containsKey(property)) {
                return jsonp.createObjectBuilder(object).remove(property).build().toString();
            }
            return json;
        }
    }

    public byte[] encodeValue(MethodSettings m, Object value) {
        return encodeValue(m.valueType(), m.voidResult(), value);
    }

    public byte[] encodeValue(Type valueType, boolean voidResult, Object value) {
        if (voidResult) {
            return EMPTY;
        }
        return jsonb.toJson(value, valueType).getBytes(StandardCharsets.UTF_8);
    }

    public Object decodeValue(MethodSettings m, byte[] stored) {
        return decodeValue(m.valueType(), m.voidResult(), stored);
    }

    public Object decodeValue(Type valueType, boolean voidResult, byte[] stored) {
        if (voidResult) {
            return null;
        }
        return jsonb.fromJson(new String(stored, StandardCharsets.UTF_8), valueType);
    }

    /** A request as JSON, as {@link #canonical}: what a functional call's fingerprint covers. */
    public String json(Object request) {
        return canonical(request, request.getClass());
    }

    /**
     * A value's JSON for its fingerprint: properties in lexicographical order, and so are the members of every object
     * (a map's entries, wherever it sits), and a set given as the value itself lists its elements in the order of their
     * text. {@code Map.of}, {@code Set.of} and hash maps and sets of enums iterate in an order of the JVM's own (a random
     * salt, identity hashes): a genuine retry on another node or after a restart must not read as another request. (A
     * set inside an object keeps its iteration order: one that does not iterate the same way in every JVM is listed in
     * the guide.)
     */
    public String canonical(Object value, Type type) {
        if (value instanceof java.util.Set<?> set) {
            java.util.List<String> elements = new java.util.ArrayList<>(set.size());
            for (Object e : set) {
                elements.add(e == null ? "null" : canonical(e, e.getClass()));
            }
            java.util.Collections.sort(elements);
            return "[" + String.join(",", elements) + "]";
        }
        String json = jsonb.toJson(value, type);
        if (json.indexOf('{') < 0) {
            return json; // no object: nothing to order
        }
        try (jakarta.json.JsonReader reader = jsonp.createReader(new java.io.StringReader(json))) {
            // Always written again by JSON-P, sorted or not: its numbers' text is not JSON-B's (1.5E+7 against
            // 1.5E7), and the same value must give the same text whichever order its map iterated in.
            return sorted(reader.readValue()).toString();
        }
    }

    /** The value with every object's members in the order of their names; the same instance when they already are. */
    private jakarta.json.JsonValue sorted(jakarta.json.JsonValue value) {
        if (value instanceof jakarta.json.JsonObject object) {
            boolean changed = false;
            String previous = null;
            java.util.Map<String, jakarta.json.JsonValue> members = new java.util.TreeMap<>();
            for (java.util.Map.Entry<String, jakarta.json.JsonValue> e : object.entrySet()) {
                jakarta.json.JsonValue v = sorted(e.getValue());
                changed |= v != e.getValue() || previous != null && previous.compareTo(e.getKey()) > 0;
                previous = e.getKey();
                members.put(e.getKey(), v);
            }
            if (!changed) {
                return object;
            }
            jakarta.json.JsonObjectBuilder b = jsonp.createObjectBuilder();
            members.forEach(b::add);
            return b.build();
        }
        if (value instanceof jakarta.json.JsonArray array) {
            boolean changed = false;
            java.util.List<jakarta.json.JsonValue> items = new java.util.ArrayList<>(array.size());
            for (jakarta.json.JsonValue item : array) {
                jakarta.json.JsonValue v = sorted(item);
                changed |= v != item;
                items.add(v);
            }
            if (!changed) {
                return array;
            }
            jakarta.json.JsonArrayBuilder b = jsonp.createArrayBuilder();
            items.forEach(b::add);
            return b.build();
        }
        return value;
    }

    public byte[] encodeFailure(Throwable t) {
        return jsonb.toJson(new StoredFailure(t.getClass().getName(), t.getMessage())).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Rebuilds a kept failure: only a type that is one of the method's {@code keepOn} types or a subtype is
     * ever instantiated.
     */
    public Throwable decodeFailure(MethodSettings m, byte[] stored) {
        return decodeFailure(m.keepOn(), m.method().getDeclaringClass().getClassLoader(), m.describe(), stored);
    }

    /** {@link #decodeFailure(MethodSettings, byte[])} for a call that is not a method's: its keepOn types, its loader. */
    public Throwable decodeFailure(java.util.List<Class<? extends Throwable>> keepOn, ClassLoader loader, String where, byte[] stored) {
        StoredFailure f = jsonb.fromJson(new String(stored, StandardCharsets.UTF_8), StoredFailure.class);
        Class<?> type;
        try {
            type = Class.forName(f.getType(), false, loader);
        } catch (ClassNotFoundException e) {
            throw new IdempotencyException("The kept failure " + f.getType() + " is not a class visible to " + where);
        }
        boolean listed = keepOn.stream().anyMatch(k -> k.isAssignableFrom(type));
        if (!listed) {
            throw new IdempotencyException("The kept failure " + f.getType() + " is not one of the keepOn types of "
                    + where + "; it is not rebuilt");
        }
        try {
            try {
                Constructor<?> withMessage = type.getConstructor(String.class);
                return (Throwable) withMessage.newInstance(f.getMessage());
            } catch (NoSuchMethodException e) {
                return (Throwable) type.getConstructor().newInstance();
            }
        } catch (ReflectiveOperationException e) {
            throw new IdempotencyException("Could not rebuild the kept failure " + f.getType() + " of " + where, e);
        }
    }

    @Override
    public void close() throws Exception {
        jsonb.close();
    }

    /** The stored form of a kept failure: its type and message. */
    public static class StoredFailure {
        private String type;
        private String message;

        public StoredFailure() {
        }

        StoredFailure(String type, String message) {
            this.type = type;
            this.message = message;
        }

        public String getType() {
            return type;
        }

        public void setType(String type) {
            this.type = type;
        }

        public String getMessage() {
            return message;
        }

        public void setMessage(String message) {
            this.message = message;
        }
    }
}
