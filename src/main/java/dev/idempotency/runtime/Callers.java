package dev.idempotency.runtime;

import dev.idempotency.spi.ScopedKey;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.ContextNotActiveException;
import jakarta.enterprise.inject.Any;
import jakarta.enterprise.inject.Default;
import jakarta.enterprise.inject.Instance;
import jakarta.inject.Inject;

import java.security.Principal;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;

/** Who calls: the principal part of a key, from CDI's built-in {@code Principal} bean. */
@ApplicationScoped
public class Callers {

    private static final Logger LOG = Logger.getLogger(Callers.class.getName());

    @Inject
    @Any
    Instance<Object> beans;

    private volatile Instance<Principal> principal;
    private volatile boolean resolved;

    /**
     * The names servers give the caller nobody authenticated, through CDI's {@code Principal}: WildFly's
     * {@code anonymous}, Payara's {@code ANONYMOUS}, Open Liberty's {@code UNAUTHENTICATED}. Such a caller is anonymous,
     * as it is over HTTP, where the same request has no principal at all.
     */
    static final Set<String> UNAUTHENTICATED = Set.of("anonymous", "ANONYMOUS", "UNAUTHENTICATED");

    /**
     * How Weld's built-in {@code Principal} says that the server has no principal for the call (a server that has one
     * for the unauthenticated gives that instead): nobody is authenticated. Any other failure refuses the call.
     */
    static final String NO_PRINCIPAL_BEHIND_THE_PROXY = "org.jboss.weld.exceptions.NullInstanceException";

    /**
     * The caller's name (the CDI {@code Principal}), {@code "anonymous"} when unauthenticated, {@code ""} when not
     * {@code scoped}.
     *
     * @throws IllegalStateException the server could not tell who calls (its {@code Principal} failed): the call is
     *                               refused rather than run as an anonymous caller, in the scope every one of them shares
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
            } catch (ContextNotActiveException e) {
                LOG.log(Level.FINE, "No principal available: no context to ask", e);
            } catch (RuntimeException e) {
                if (!NO_PRINCIPAL_BEHIND_THE_PROXY.equals(e.getClass().getName())) {
                    throw new IllegalStateException("Could not tell who calls (the server's Principal failed); nothing ran", e);
                }
                LOG.log(Level.FINE, "No principal available: nobody is authenticated", e);
            }
        }
        if (name != null && UNAUTHENTICATED.contains(name)) {
            name = null;
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
