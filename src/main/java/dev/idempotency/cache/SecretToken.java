package dev.idempotency.cache;

import org.jgroups.Message;
import org.jgroups.auth.AuthToken;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.security.MessageDigest;

/**
 * JGroups AUTH token of the library's stack: a joining node shows a proof derived from the cluster's secret, and the
 * coordinator admits it only when the proof is its own (compared in constant time). JGroups 5 ships no shared-secret
 * token any more (its clear-text ones were removed); this one travels only inside SYM_ENCRYPT's ciphertext (SERIALIZE
 * puts headers into the encrypted payload), so it is never seen on the wire. Public with a no-argument constructor:
 * JGroups creates the received token by its class name.
 */
public final class SecretToken extends AuthToken {

    private static final int MAX = 64;

    private byte[] proof = new byte[0];

    public SecretToken() {
    }

    SecretToken(byte[] proof) {
        this.proof = proof;
    }

    @Override
    public String getName() {
        return SecretToken.class.getName();
    }

    @Override
    public int size() {
        return 1 + proof.length;
    }

    @Override
    public boolean authenticate(AuthToken token, Message msg) {
        return token instanceof SecretToken other && proof.length > 0 && MessageDigest.isEqual(proof, other.proof);
    }

    @Override
    public void writeTo(DataOutput out) throws IOException {
        out.writeByte(proof.length);
        out.write(proof);
    }

    @Override
    public void readFrom(DataInput in) throws IOException {
        int n = in.readUnsignedByte();
        if (n > MAX) {
            throw new IOException("token too long");
        }
        proof = new byte[n];
        in.readFully(proof);
    }
}
