package dev.idempotency.spi;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.security.Principal;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** The principal part of a key: no authenticated name ever meets the scope of anonymous callers or of a client id. */
class CallerScopeTest {

    static String scope(String name) {
        Principal p = name == null ? null : () -> name;
        return ScopedKey.principalOf(p, true);
    }

    @Test
    @DisplayName("authenticated names that look like anonymous scopes are escaped; every other name is kept as it was")
    void authenticatedNamesNeverMeetAnonymousScopes() {
        assertThat(scope(null)).isEqualTo("anonymous");
        assertThat(scope("")).isEqualTo("anonymous");
        assertThat(scope("alice")).isEqualTo("alice");
        assertThat(scope("anonymous")).isNotEqualTo("anonymous").isEqualTo("~anonymous");
        assertThat(scope("anonymous:client-a")).isNotEqualTo("anonymous:client-a");
        assertThat(scope("anonymousBob")).isEqualTo("anonymousBob");
        List<String> names = List.of("anonymous", "~anonymous", "~~anonymous", "anonymous:a", "~anonymous:a", "~", "~~", "a~", "alice");
        Set<String> scopes = new HashSet<>(List.of("anonymous", "anonymous:a", "anonymous:~"));
        for (String n : names) {
            assertThat(scopes.add(scope(n))).as("%s has a scope of its own", n).isTrue();
        }
    }

    /** A name of the column's length shaped like another's shortened form (prefix, '~', digest) cannot pass for it. */
    @Test
    @DisplayName("no name passes for another's shortened form")
    void noNamePassesForAnothersShortenedForm() {
        String victim = "v".repeat(300);
        String shortened = scope(victim);
        assertThat(shortened).hasSize(ScopedKey.MAX_PRINCIPAL).contains("~");
        assertThat(scope(shortened)).as("the same text sent as a name").isNotEqualTo(shortened).hasSize(ScopedKey.MAX_PRINCIPAL);
        assertThat(scope("w".repeat(ScopedKey.MAX_PRINCIPAL))).as("a name of the column's length without that shape").isEqualTo("w".repeat(ScopedKey.MAX_PRINCIPAL));
    }
}
