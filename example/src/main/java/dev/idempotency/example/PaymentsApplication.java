package dev.idempotency.example;

import jakarta.annotation.security.DeclareRoles;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.security.enterprise.authentication.mechanism.http.BasicAuthenticationMechanismDefinition;
import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/**
 * The payments example: {@code /api}. HTTP Basic for alice and bob (see {@link Users}); a request without
 * credentials is anonymous and allowed. Nothing of the idempotency library is registered here: it finds
 * its way in by itself.
 */
@ApplicationPath("/api")
@ApplicationScoped
@DeclareRoles({"user", "operator"})
@BasicAuthenticationMechanismDefinition(realmName = "payments")
public class PaymentsApplication extends Application {
}
