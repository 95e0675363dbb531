package dev.idempotency.cdi;

import dev.idempotency.spi.ScopedKey;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Default;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;

import java.security.Principal;
import java.util.logging.Level;
import java.util.logging.Logger;

/** Who calls: the principal part of a key, from CDI's built-in {@code Principal} bean (SPEC H9). */
@ApplicationScoped
public class Callers {

    private static final Logger LOG = Logger.getLogger(Callers.class.getName());

    @Inject
    @Any
    Instance<Object> beans;

    private volatile Instance<Principal> principal;
    private volatile boolean resolved;

    /**
     * The caller's name (the CDI {@code Principal}), {@code "anonymous"} when unauthenticated, {@code ""} when not
     * {@code scoped}.
     */
    public String principalName(boolean scoped) {
        if (!scoped) {
            return "";
        }
        String name = null;
        Instance<Principal> principal = principal();
        if (principal != null) {
            try {
                Principal p = principal.get(); // the container's proxy: asking its name may fail outside a request
                name = p == null ? null : p.getName();
            } catch (RuntimeException e) {
                LOG.log(Level.FINE, "No principal available", e);
            }
        }
        String caller = name;
        return ScopedKey.principalOf(caller == null ? null : () -> caller, true);
    }

    private Instance<Principal> principal() {
        if (!resolved) {
            Instance<Principal> p = beans.select(Principal.class, Default.Literal.INSTANCE);
            principal = p.isResolvable() ? p : null;
            resolved = true;
        }
        return principal;
    }
}
