package dev.idempotency.fuzz;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * A fuzz input read as fields, so that seed files stay plain bytes one can write by hand: a length-prefixed part is
 * one byte of length then that many bytes; numbers are big-endian; anything past the end reads as zero or empty.
 * Strings are decoded as UTF-8 (malformed bytes become U+FFFD), so every string is well formed.
 */
final class Input {

    private final byte[] bytes;
    private int at;

    Input(byte[] bytes) {
        this.bytes = bytes;
    }

    int u8() {
        return at < bytes.length ? bytes[at++] & 0xFF : 0;
    }

    int i32() {
        return u8() << 24 | u8() << 16 | u8() << 8 | u8();
    }

    long i64() {
        return (long) i32() << 32 | (i32() & 0xFFFFFFFFL);
    }

    byte[] part() {
        int n = Math.min(u8(), bytes.length - at);
        byte[] out = Arrays.copyOfRange(bytes, at, at + n);
        at += n;
        return out;
    }

    String string() {
        return new String(part(), StandardCharsets.UTF_8);
    }

    byte[] rest() {
        byte[] out = Arrays.copyOfRange(bytes, Math.min(at, bytes.length), bytes.length);
        at = bytes.length;
        return out;
    }
}
