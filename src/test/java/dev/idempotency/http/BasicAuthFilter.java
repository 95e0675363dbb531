package dev.idempotency.http;

import jakarta.annotation.Priority;
import jakarta.ws.rs.Priorities;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.ext.Provider;

import java.nio.charset.StandardCharsets;
import java.security.Principal;
import java.util.Base64;
import java.util.Map;

/** HTTP Basic for the tests (alice / alice-pw, bob / bob-pw, and a user named anonymous); no credentials means anonymous. */
@Provider
@Priority(Priorities.AUTHENTICATION)
public class BasicAuthFilter implements ContainerRequestFilter {

    static final Map<String, String> USERS = Map.of("alice", "alice-pw", "bob", "bob-pw", "anonymous", "anonymous-pw");

    @Override
    public void filter(ContainerRequestContext request) {
        String auth = request.getHeaderString("Authorization");
        if (auth == null || !auth.startsWith("Basic ")) {
            return;
        }
        String[] userPassword = new String(Base64.getDecoder().decode(auth.substring(6)), StandardCharsets.UTF_8).split(":", 2);
        if (userPassword.length != 2 || !userPassword[1].equals(USERS.get(userPassword[0]))) {
            request.abortWith(Response.status(401).build());
            return;
        }
        Principal principal = () -> userPassword[0];
        request.setSecurityContext(new SecurityContext() {
            @Override
            public Principal getUserPrincipal() {
                return principal;
            }

            @Override
            public boolean isUserInRole(String role) {
                return false;
            }

            @Override
            public boolean isSecure() {
                return false;
            }

            @Override
            public String getAuthenticationScheme() {
                return BASIC_AUTH;
            }
        });
    }

    static String basic(String user) {
        return "Basic " + Base64.getEncoder().encodeToString((user + ":" + USERS.get(user)).getBytes(StandardCharsets.UTF_8));
    }
}
