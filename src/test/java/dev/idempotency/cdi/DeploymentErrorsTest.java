package dev.idempotency.cdi;

import dev.idempotency.Idempotent;
import dev.idempotency.IdempotencyKey;
import dev.idempotency.testing.IdempotencyWeld;

import jakarta.enterprise.context.ApplicationScoped;

import org.jboss.weld.environment.se.WeldContainer;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/** Every misuse and every bad configuration value fails the deployment, with a message naming the method (or key) and the fix. */
class DeploymentErrorsTest {

    @ApplicationScoped
    public static class NoKey {
        @Idempotent
        public String charge(String account, long amount) {
            return "x";
        }
    }

    @ApplicationScoped
    public static class TwoKeys {
        @Idempotent
        public String charge(@IdempotencyKey String a, @IdempotencyKey String b) {
            return "x";
        }
    }

    @ApplicationScoped
    public static class ReturnsObject {
        @Idempotent
        public Object charge(@IdempotencyKey String key) {
            return "x";
        }
    }

    @ApplicationScoped
    public static class ReturnsIterator {
        @Idempotent
        public Iterator<String> charge(@IdempotencyKey String key) {
            return List.of("x").iterator();
        }
    }

    @ApplicationScoped
    public static class ReturnsTypeVariable {
        @Idempotent
        public <T> T charge(@IdempotencyKey String key) {
            return null;
        }
    }

    @ApplicationScoped
    public static class TakesAStream {
        @Idempotent
        public String upload(@IdempotencyKey String key, InputStream body) {
            return "x";
        }
    }

    public static class NotRebuildable extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public NotRebuildable(int code) {
            super("code " + code);
        }
    }

    @ApplicationScoped
    public static class KeepsUnrebuildable {
        @Idempotent(keepOn = NotRebuildable.class)
        public String charge(@IdempotencyKey String key) {
            return "x";
        }
    }

    @ApplicationScoped
    public static class BadAnnotationDuration {
        @Idempotent(ttl = "24h")
        public String charge(@IdempotencyKey String key) {
            return "x";
        }
    }

    @ApplicationScoped
    public static class ClassLevel {
        @Idempotent
        public String fine(@IdempotencyKey String key) {
            return "x";
        }
    }

    @jakarta.ws.rs.Path("/r")
    @ApplicationScoped
    public static class ResourceWithKeyParameter {
        @jakarta.ws.rs.POST
        @Idempotent
        public String create(@IdempotencyKey @jakarta.ws.rs.HeaderParam("Idempotency-Key") String key) {
            return "x";
        }
    }

    @ApplicationScoped
    public static class BadHttpOptions {
        @Idempotent(keepStatus = "2xx,teapot", header = "bad header")
        public String charge(@IdempotencyKey String key) {
            return "x";
        }
    }

    @ApplicationScoped
    public static class AtomicStage {
        @Idempotent(claim = dev.idempotency.ClaimMode.ATOMIC)
        public java.util.concurrent.CompletableFuture<String> charge(@IdempotencyKey String key) {
            return java.util.concurrent.CompletableFuture.completedFuture("x");
        }
    }

    @ApplicationScoped
    public static class OptimisticStage {
        @Idempotent(claim = dev.idempotency.ClaimMode.OPTIMISTIC)
        public java.util.concurrent.CompletableFuture<String> charge(@IdempotencyKey String key) {
            return java.util.concurrent.CompletableFuture.completedFuture("x");
        }
    }

    @jakarta.ws.rs.Path("/suspended")
    @ApplicationScoped
    public static class AtomicSuspended {
        @jakarta.ws.rs.POST
        @Idempotent(claim = dev.idempotency.ClaimMode.ATOMIC)
        public void charge(@jakarta.ws.rs.container.Suspended jakarta.ws.rs.container.AsyncResponse response) {
            response.resume("x");
        }
    }

    @ApplicationScoped
    public static class AtomicWithoutTransactions {
        @Idempotent(claim = dev.idempotency.ClaimMode.ATOMIC)
        public String charge(@IdempotencyKey String key) {
            return "x";
        }
    }

    static String deploymentFailure(Map<String, String> config, Class<?>... beans) {
        Map<String, String> p = new java.util.HashMap<>(config);
        p.putIfAbsent("idempotency.store", "memory");
        try (WeldContainer ignored = IdempotencyWeld.weld(p, beans).initialize()) {
            return fail("the deployment should have failed");
        } catch (RuntimeException e) {
            StringWriter text = new StringWriter();
            e.printStackTrace(new PrintWriter(text));
            return text.toString();
        }
    }

    @Test
    void noKeySource() {
        assertThat(deploymentFailure(Map.of(), NoKey.class))
                .contains(NoKey.class.getName() + "#charge")
                .contains("has no key: mark the parameter that carries the client's key with @IdempotencyKey");
    }

    @Test
    void twoKeyParameters() {
        assertThat(deploymentFailure(Map.of(), TwoKeys.class))
                .contains(TwoKeys.class.getName() + "#charge has two @IdempotencyKey parameters (1 and 2)");
    }

    @Test
    void unstorableReturnTypes() {
        assertThat(deploymentFailure(Map.of(), ReturnsObject.class))
                .contains(ReturnsObject.class.getName() + "#charge returns java.lang.Object, which cannot be stored");
        assertThat(deploymentFailure(Map.of(), ReturnsIterator.class))
                .contains(ReturnsIterator.class.getName() + "#charge returns java.util.Iterator<java.lang.String>, which cannot be stored")
                .contains("an interface");
        assertThat(deploymentFailure(Map.of(), ReturnsTypeVariable.class))
                .contains("#charge returns T, which cannot be stored: the type variable T");
    }

    @Test
    void unfingerprintableParameter() {
        assertThat(deploymentFailure(Map.of(), TakesAStream.class))
                .contains(TakesAStream.class.getName() + "#upload takes a java.io.InputStream (parameter 2), which cannot be fingerprinted");
    }

    @Test
    void keptExceptionThatCannotBeRebuilt() {
        assertThat(deploymentFailure(Map.of(), KeepsUnrebuildable.class))
                .contains("keeps " + NotRebuildable.class.getName() + ", which has no public constructor taking a String");
    }

    @Test
    void badDurationInTheAnnotation() {
        assertThat(deploymentFailure(Map.of(), BadAnnotationDuration.class))
                .contains(BadAnnotationDuration.class.getName() + "#charge")
                .contains("@Idempotent(ttl) on " + BadAnnotationDuration.class.getName() + "#charge=24h is not an ISO-8601 duration");
    }

    @ApplicationScoped
    public static class TtlShorterThanLease {
        @Idempotent(ttl = "PT30S", lease = "PT1M")
        public String charge(@IdempotencyKey String key) {
            return "x";
        }
    }

    @Test
    void aTtlShorterThanTheLeaseFailsTheDeployment() {
        assertThat(deploymentFailure(Map.of(), TtlShorterThanLease.class))
                .contains("@Idempotent method " + TtlShorterThanLease.class.getName() + "#charge")
                .contains("keeps its records for PT30S (ttl), less than its lease of PT1M")
                .contains("make ttl at least the lease");
        assertThat(deploymentFailure(Map.of("idempotency.ttl", "PT10S"), ClassLevel.class))
                .contains("keeps its records for PT10S (ttl), less than its lease of PT1M");
    }

    @Test
    void badConfigValuesNameTheirKey() {
        assertThat(deploymentFailure(Map.of("idempotency.ttl", "24h"), ClassLevel.class))
                .contains("idempotency.ttl=24h is not an ISO-8601 duration (for example PT30S, PT24H, P7D)");
        assertThat(deploymentFailure(Map.of("idempotency.on-concurrent", "sometimes"), ClassLevel.class))
                .contains("idempotency.on-concurrent=sometimes must be one of reject, wait");
        assertThat(deploymentFailure(Map.of(ClassLevel.class.getName() + "/fine/Idempotent/lease", "-PT1S"), ClassLevel.class))
                .contains(ClassLevel.class.getName() + "/fine/Idempotent/lease=-PT1S must be positive");
        assertThat(deploymentFailure(Map.of("Idempotent/enabled", "yes"), ClassLevel.class))
                .contains("Idempotent/enabled=yes must be true or false");
        assertThat(deploymentFailure(Map.of("idempotency.store-keys", "sha1"), ClassLevel.class))
                .contains("idempotency.store-keys=sha1 must be one of plain, hashed");
        assertThat(deploymentFailure(Map.of("idempotency.datasource", "java:comp/Default\u0000DataSource"), ClassLevel.class))
                .contains("idempotency.datasource=java:comp/Default\\u0000DataSource must be printable ASCII (it has a control character at 18)");
        assertThat(deploymentFailure(Map.of("idempotency.cache.cluster-name", "z".repeat(300)), ClassLevel.class))
                .contains("idempotency.cache.cluster-name=" + "z".repeat(100) + "... (300 characters) is longer than 255 characters");
        assertThat(deploymentFailure(Map.of(ClassLevel.class.getName() + "/fine/Idempotent/maxRequestSize", "-1"), ClassLevel.class))
                .contains(ClassLevel.class.getName() + "/fine/Idempotent/maxRequestSize=-1 must be between 1 and 2147483639");
    }

    @Test
    void unknownKeysAreTypos() {
        assertThat(deploymentFailure(Map.of("idempotency.tll", "PT1H"), ClassLevel.class))
                .contains("Unknown configuration key idempotency.tll");
        assertThat(deploymentFailure(Map.of("Idempotent/tll", "PT1H"), ClassLevel.class))
                .contains("Unknown configuration key Idempotent/tll: Idempotent has no member 'tll'");
    }

    @Test
    void aResourceMethodTakesItsKeyFromTheHeaderNotAParameter() {
        assertThat(deploymentFailure(Map.of(), ResourceWithKeyParameter.class))
                .contains(ResourceWithKeyParameter.class.getName() + "#create is a JAX-RS resource method with an @IdempotencyKey parameter");
    }

    @Test
    void badHttpOptions() {
        assertThat(deploymentFailure(Map.of(), BadHttpOptions.class))
                .contains("'teapot' is neither a status class (2xx) nor a status code (409)")
                .contains("=bad header is not an HTTP header name");
        assertThat(deploymentFailure(Map.of("idempotency.replay-headers", "X-Trace,Set-Cookie"), ClassLevel.class))
                .contains("idempotency.replay-headers names Set-Cookie, which is about the caller and is never replayed");
    }

    @Test
    void atomicClaimsWhereTheyCannotWork() {
        assertThat(deploymentFailure(Map.of(), AtomicStage.class))
                .contains(AtomicStage.class.getName() + "#charge returns a CompletionStage and asks for claim ATOMIC")
                .contains("Use claim = ClaimMode.LEASED");
        assertThat(deploymentFailure(Map.of(), OptimisticStage.class))
                .contains(OptimisticStage.class.getName() + "#charge returns a CompletionStage and asks for claim OPTIMISTIC")
                .contains("Use claim = ClaimMode.LEASED");
        assertThat(deploymentFailure(Map.of(), AtomicSuspended.class))
                .contains(AtomicSuspended.class.getName() + "#charge suspends its response (@Suspended) and asks for claim ATOMIC")
                .contains("Use claim = ClaimMode.LEASED");
        assertThat(deploymentFailure(Map.of(), AtomicWithoutTransactions.class))
                .contains("@Idempotent methods [" + AtomicWithoutTransactions.class.getName() + "#charge] ask for claim ATOMIC or OPTIMISTIC, but the store "
                        + "dev.idempotency.store.memory.InMemoryIdempotencyStore cannot claim inside a transaction")
                .contains("use claim = ClaimMode.LEASED");
        assertThat(deploymentFailure(Map.of("idempotency.claim", "sometimes"), ClassLevel.class))
                .contains("idempotency.claim=sometimes must be one of auto, atomic, leased, optimistic");
    }

    @Test
    void anEnvironmentVariableIsNotATypo() {
        // As a server maps IDEMPOTENCY_TEST_REQUIRE_DATABASES=true from its environment.
        org.eclipse.microprofile.config.Config config = new io.smallrye.config.SmallRyeConfigBuilder()
                .withSources(new io.smallrye.config.EnvConfigSource(Map.of("idempotency.test.require.databases", "true"), 300))
                .withSources(new io.smallrye.config.PropertiesConfigSource(Map.of("idempotency.store", "memory"), "test", 500))
                .build();
        try (WeldContainer c = org.jboss.weld.junit5.WeldInitiator.createWeld()
                .addExtension(new IdempotencyExtension(config)).addBeanClasses(ClassLevel.class).initialize()) {
            assertThat(c.select(ClassLevel.class).get().fine("k")).isEqualTo("x");
        }
    }

    @Test
    void aGoodBeanDeploys() {
        try (WeldContainer c = IdempotencyWeld.weld(Map.of("idempotency.store", "memory"), ClassLevel.class).initialize()) {
            assertThat(c.select(ClassLevel.class).get().fine("k")).isEqualTo("x");
        }
    }

    @jakarta.ws.rs.Path("/anonymous")
    @ApplicationScoped
    public static class AnonymousByHeader {
        @jakarta.ws.rs.POST
        @Idempotent(anonymous = "header:X-Client-Id")
        public String create() {
            return "x";
        }
    }

    @jakarta.ws.rs.Path("/anonymous-bad")
    @ApplicationScoped
    public static class AnonymousMisspelt {
        @jakarta.ws.rs.POST
        @Idempotent(anonymous = "deny")
        public String create() {
            return "x";
        }
    }

    @Test
    void badAnonymousPolicies() {
        assertThat(deploymentFailure(Map.of("idempotency.anonymous", "sometimes"), ClassLevel.class))
                .contains("idempotency.anonymous=sometimes must be allow, reject or header:<request header name>");
        assertThat(deploymentFailure(Map.of("idempotency.anonymous", "header:bad header"), ClassLevel.class))
                .contains("idempotency.anonymous=header:bad header is not header:<request header name>: 'bad header' is not an HTTP header name");
        assertThat(deploymentFailure(Map.of(), AnonymousMisspelt.class))
                .contains("@Idempotent method " + AnonymousMisspelt.class.getName() + "#create: @Idempotent(anonymous) on "
                        + AnonymousMisspelt.class.getName() + "#create=deny must be allow, reject or header:<request header name>");
        assertThat(deploymentFailure(Map.of("idempotency.scope-by-principal", "false"), AnonymousByHeader.class))
                .contains("@Idempotent method " + AnonymousByHeader.class.getName() + "#create scopes anonymous keys by the header "
                        + "X-Client-Id (anonymous=header:X-Client-Id), but idempotency.scope-by-principal=false shares every key");
    }

    public record TwoKeysInside(@IdempotencyKey String a, @IdempotencyKey String b) {
    }

    public record KeyInside(@IdempotencyKey String id, long amount) {
    }

    public static class NotAGetter {
        @IdempotencyKey
        public String key(String prefix) {
            return prefix;
        }
    }

    @ApplicationScoped
    public static class TwoKeysInOneCommand {
        @Idempotent
        public String charge(TwoKeysInside command) {
            return "x";
        }
    }

    @ApplicationScoped
    public static class AKeyParameterAndAKeyInside {
        @Idempotent
        public String charge(@IdempotencyKey String key, KeyInside command) {
            return "x";
        }
    }

    @ApplicationScoped
    public static class KeysInsideTwoParameters {
        @Idempotent
        public String charge(KeyInside first, KeyInside second) {
            return "x";
        }
    }

    @ApplicationScoped
    public static class KeyOnAMethodWithParameters {
        @Idempotent
        public String charge(NotAGetter command) {
            return "x";
        }
    }

    /** A bean whose field is marked: it is no @Idempotent method's parameter type. */
    @ApplicationScoped
    public static class KeyOnABeanField {
        @IdempotencyKey
        String key = "k";
    }

    @Test
    void keysInsideParameters() {
        assertThat(deploymentFailure(Map.of(), TwoKeysInOneCommand.class))
                .contains("@Idempotent method " + TwoKeysInOneCommand.class.getName() + "#charge takes a " + TwoKeysInside.class.getName()
                        + " (parameter 1) with two @IdempotencyKey members (a and b); mark exactly one as the key");
        assertThat(deploymentFailure(Map.of(), AKeyParameterAndAKeyInside.class))
                .contains("@Idempotent method " + AKeyParameterAndAKeyInside.class.getName() + "#charge has two keys: its @IdempotencyKey "
                        + "parameter 1 and KeyInside.id (a record component of parameter 2); mark exactly one as the key");
        assertThat(deploymentFailure(Map.of(), KeysInsideTwoParameters.class))
                .contains("#charge has two keys: KeyInside.id (a record component of parameter 1) and KeyInside.id (a record component"
                        + " of parameter 2)");
        assertThat(deploymentFailure(Map.of(), KeyOnAMethodWithParameters.class))
                .contains("the method " + NotAGetter.class.getName() + ".key is marked @IdempotencyKey but is not a getter");
        assertThat(deploymentFailure(Map.of(), KeyOnABeanField.class, ClassLevel.class))
                .contains("The field key of " + KeyOnABeanField.class.getName() + " is marked @IdempotencyKey, but KeyOnABeanField is the"
                        + " type of no @Idempotent method's parameter");
    }

    @jakarta.ws.rs.Path("/body")
    @ApplicationScoped
    public static class BadBodyOptions {
        @jakarta.ws.rs.POST
        @Idempotent(keyFrom = "orderId", fingerprintFields = {"/amount", "amount~2"})
        public String create(String body) {
            return "x";
        }

        @jakarta.ws.rs.POST
        @jakarta.ws.rs.Path("none")
        @Idempotent(keyFromHeader = false)
        public String noKey(String body) {
            return "x";
        }
    }

    @ApplicationScoped
    public static class BodyOptionsOnAService {
        @Idempotent(keyFrom = "/orderId")
        public String charge(@IdempotencyKey String key) {
            return "x";
        }
    }

    @Test
    void badBodyKeyOptions() {
        String failure = deploymentFailure(Map.of(), BadBodyOptions.class);
        assertThat(failure)
                .contains("@Idempotent(keyFrom) on " + BadBodyOptions.class.getName() + "#create=orderId is not a JSON Pointer to a field")
                .contains("@Idempotent(fingerprintFields) on " + BadBodyOptions.class.getName() + "#create=amount~2 is not a JSON Pointer")
                .contains(BadBodyOptions.class.getName() + "#noKey has keyFromHeader = false and no keyFrom: its requests have no key");
        assertThat(deploymentFailure(Map.of(), BodyOptionsOnAService.class))
                .contains(BodyOptionsOnAService.class.getName() + "#charge names keyFrom, keyFromHeader or fingerprintFields, which are for JAX-RS resource methods");
        assertThat(deploymentFailure(Map.of("idempotency.expiry-header", "bad header"), ClassLevel.class))
                .contains("idempotency.expiry-header=bad header is not an HTTP header name");
    }
}
