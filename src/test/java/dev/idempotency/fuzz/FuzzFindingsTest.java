package dev.idempotency.fuzz;

import dev.idempotency.IdempotencyException;
import dev.idempotency.cache.CacheKeys;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.IdempotencyTransferException;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import javax.crypto.Mac;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the fuzz tests found, as plain tests (they run without Jazzer's seed corpora too). Each input is also in its
 * target's corpus.
 */
class FuzzFindingsTest {

    private static final Method DECODE = Internals.method(Internals.type("dev.idempotency.jaxrs.StoredHttpResponse"),
            "decode", byte[].class);

    /** A stored response whose body length is negative: was a NegativeArraySizeException, not the library's refusal. */
    @Test
    void aStoredResponseWithANegativeBodyLengthIsRefused() {
        byte[] stored = storedWithBodyLength(-1, 0);
        assertThatThrownBy(() -> Internals.call(DECODE, null, (Object) stored))
                .isInstanceOf(IdempotencyException.class).hasMessageContaining("body length -1");
    }

    /** A body length far past the bytes there are: was an array of up to 2 GiB made before the read failed. */
    @Test
    void aStoredResponseWithAHugeBodyLengthIsRefusedWithoutAllocatingIt() {
        byte[] stored = storedWithBodyLength(Integer.MAX_VALUE, 3);
        assertThatThrownBy(() -> Internals.call(DECODE, null, (Object) stored))
                .isInstanceOf(IdempotencyException.class).hasMessageContaining("body length " + Integer.MAX_VALUE);
    }

    /** Version 1, status 200, body not omitted, no headers, then the body length and {@code bytes} bytes. */
    private static byte[] storedWithBodyLength(int length, int bytes) {
        return ByteBuffer.allocate(1 + 2 + 1 + 2 + 4 + bytes).put((byte) 1).putShort((short) 200).put((byte) 0)
                .putShort((short) 0).putInt(length).array();
    }

    /**
     * RecordBytesFuzzTest's finding, left as it is and pinned here: the cache entry writes "no time" as
     * {@link Long#MIN_VALUE} milliseconds, so an instant at exactly that millisecond (year -292275055) comes back as
     * {@code null}. Every other instant round-trips (the fuzz test checks them); the entry still verifies.
     */
    @Test
    void anInstantAtTheCacheEntrysNoTimeMarkDecodesAsNoTime() {
        Class<?> recordBytes = Internals.type("dev.idempotency.cache.RecordBytes");
        Mac mac = Internals.call(Internals.method(CacheKeys.class, "entryMac"),
                CacheKeys.of("a secret of thirty-two characters".getBytes(StandardCharsets.UTF_8)));
        Instant marker = Instant.ofEpochMilli(Long.MIN_VALUE);
        IdempotencyRecord r = IdempotencyRecord.of(new ScopedKey("n", "p", "k")).status(RecordStatus.COMPLETED)
                .fingerprint("f").firstSeen(marker).lastSeen(marker.plusMillis(1)).completedAt(marker)
                .expiresAt(Instant.EPOCH).build();
        byte[] entry = Internals.call(Internals.method(recordBytes, "encode", IdempotencyRecord.class, Mac.class), null, r, mac);
        assertThat((Object) Internals.call(Internals.method(recordBytes, "check", byte[].class, Mac.class), null, entry, mac))
                .hasToString("VERIFIED");
        IdempotencyRecord back = Internals.call(Internals.method(recordBytes, "decode", byte[].class), null, (Object) entry);
        assertThat(back.firstSeen()).isNull();
        assertThat(back.completedAt()).isNull();
        assertThat(back.lastSeen()).isEqualTo(marker.plusMillis(1));
    }

    /**
     * ExportImportFuzzTest's finding: a line with a member the export does not have, cut short or malformed, made
     * JSON-B (Yasson 3.0.4, Parsson 1.1.7) loop for ever skipping it, so importFrom never returned. Now refused.
     */
    @Test
    @Timeout(30)
    void anExportWithAnUnknownMemberCutShortIsRefusedNotHung(@TempDir Path dir) throws Exception {
        String header = "{\"format\":\"idempotency-jakarta-export\",\"records\":1,\"version\":1";
        Path inHeader = Files.writeString(dir.resolve("header.jsonl"), header + ",\"x\":[1}\n");
        Path inRecord = Files.writeString(dir.resolve("record.jsonl"), header + "}\n{\"key\":\"k\",\"x\":{\"a\":1]}\n");
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        assertThatThrownBy(() -> ExportImportFuzzTest.manager(store).importFrom(inHeader))
                .isInstanceOf(IdempotencyTransferException.class).hasMessageContaining("is corrupt");
        assertThatThrownBy(() -> ExportImportFuzzTest.manager(store).importFrom(inRecord))
                .isInstanceOf(IdempotencyTransferException.class).hasMessageContaining("is corrupt at line 2");
        assertThat(store.all()).isEmpty();
    }

    /**
     * JsonBodyFuzzTest's finding, left open and pinned here: a fingerprinted field whose string is escaped as unpaired
     * surrogates ({@code "\ud832"}, not Unicode text; RFC 8259 leaves it unpredictable) is fingerprinted as UTF-8, which
     * has no form for it, so two such values differing only there fingerprint alike.
     */
    @Test
    void fingerprintsOfUnpairedSurrogateEscapesCollide() {
        Class<?> jsonBody = Internals.type("dev.idempotency.jaxrs.JsonBody");
        Object reader = Internals.create(Internals.constructor(jsonBody, String.class, java.util.List.class), "", java.util.List.of("/v"));
        Method parse = Internals.method(jsonBody, "parse", byte[].class);
        Method addFields = Internals.method(jsonBody, "addFields", dev.idempotency.core.Fingerprint.class, jakarta.json.JsonStructure.class);
        String[] hex = new String[2];
        String[] bodies = {"{\"v\":\"\\ud832\"}", "{\"v\":\"\\ud833\"}"};
        for (int i = 0; i < 2; i++) {
            dev.idempotency.core.Fingerprint f = dev.idempotency.core.Fingerprint.start();
            Internals.call(addFields, reader, f, Internals.call(parse, null, (Object) bodies[i].getBytes(StandardCharsets.UTF_8)));
            hex[i] = f.hex();
        }
        assertThat(hex[1]).isEqualTo(hex[0]);
    }

    /**
     * ConfigValuesFuzzTest (corpus: secret-with-a-control-character): a cache secret with a control character is refused
     * for it, and the message says which key and why, never the secret (the fuzz test's "same shape" had turned the
     * control character into a letter, and so expected another message: the test's shape now keeps it).
     */
    @Test
    void aCacheSecretWithAControlCharacterIsRefusedWithoutEchoingIt() {
        String secret = "\u00eco\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000\u0000cal-1";
        dev.idempotency.config.ConfigErrors errors = new dev.idempotency.config.ConfigErrors();
        dev.idempotency.config.GlobalSettings.read(dev.idempotency.testing.IdempotencyWeld.config(
                java.util.Map.of("idempotency.cache.secret", secret)), errors);
        assertThat(errors.all()).extracting(Throwable::getMessage).containsExactly("idempotency.cache.secret has a control character");
    }
}
