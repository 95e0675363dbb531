package dev.idempotency.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.idempotency.cache.CacheKeys;
import dev.idempotency.cache.SecretToken;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The JGroups AUTH token ({@link SecretToken}) a joining node shows. Input: the token as it arrives. The contract:
 * {@code readFrom} reads a token or throws IOException (never another exception, never more than 64 bytes of proof);
 * a token read writes back the bytes it was read from; the coordinator admits a received token only when its proof
 * is exactly the cluster's (derived from the secret), and never admits an empty proof.
 */
class SecretTokenFuzzTest {

    private static final Constructor<?> WITH_PROOF = Internals.constructor(SecretToken.class, byte[].class);
    private static final Method JOIN_PROOF = Internals.method(CacheKeys.class, "joinProof");
    private static final byte[] PROOF = Internals.call(JOIN_PROOF,
            CacheKeys.of("the cluster's shared secret, 32+ chars".getBytes(StandardCharsets.UTF_8)));
    private static final SecretToken COORDINATOR = Internals.create(WITH_PROOF, (Object) PROOF);

    @FuzzTest(maxDuration = Internals.MAX_DURATION)
    void token(byte[] input) throws IOException {
        SecretToken received = new SecretToken();
        try {
            received.readFrom(new DataInputStream(new ByteArrayInputStream(input)));
        } catch (IOException e) {
            assertThat(COORDINATOR.authenticate(received, null)).isFalse();
            return;
        }
        int n = input[0] & 0xFF;
        assertThat(n).isLessThanOrEqualTo(64);
        assertThat(received.size()).isEqualTo(1 + n);
        ByteArrayOutputStream written = new ByteArrayOutputStream();
        received.writeTo(new DataOutputStream(written));
        assertThat(written.toByteArray()).isEqualTo(Arrays.copyOf(input, 1 + n));

        byte[] proof = Arrays.copyOfRange(input, 1, 1 + n);
        assertThat(COORDINATOR.authenticate(received, null)).isEqualTo(Arrays.equals(proof, PROOF));
        assertThat(received.authenticate(COORDINATOR, null)).isEqualTo(n > 0 && Arrays.equals(proof, PROOF));
        assertThat(received.authenticate(received, null)).isEqualTo(n > 0);
        assertThat(new SecretToken().authenticate(received, null)).as("an empty proof admits no one").isFalse();
    }
}
