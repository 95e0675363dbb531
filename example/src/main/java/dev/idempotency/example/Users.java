package dev.idempotency.example;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.security.enterprise.credential.Credential;
import jakarta.security.enterprise.credential.UsernamePasswordCredential;
import jakarta.security.enterprise.identitystore.CredentialValidationResult;
import jakarta.security.enterprise.identitystore.IdentityStore;

import java.util.Map;
import java.util.Set;

/**
 * Two demo users, alice / alice-pw and bob / bob-pw (role {@code user}), and an operator, ops / ops-pw (role
 * {@code operator}: {@code POST /api/ops/cache/flush}).
 */
@ApplicationScoped
public class Users implements IdentityStore {

    private static final Map<String, String> PASSWORDS = Map.of("alice", "alice-pw", "bob", "bob-pw", "ops", "ops-pw");

    @Override
    public CredentialValidationResult validate(Credential credential) {
        if (credential instanceof UsernamePasswordCredential c
                && c.getPasswordAsString().equals(PASSWORDS.get(c.getCaller()))) {
            return new CredentialValidationResult(c.getCaller(), Set.of(c.getCaller().equals("ops") ? "operator" : "user"));
        }
        return CredentialValidationResult.INVALID_RESULT;
    }
}
