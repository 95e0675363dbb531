package dev.idempotency;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The house's plan, enforced on the compiled classes (ArchUnit): the public API and the SPI import nothing
 * internal, the SPI knows no CDI, the engine knows no framework, no door imports another, only the wiring knows the
 * container, and no two packages import each other in a circle. CONTRIBUTING.md's "The house" draws the plan.
 */
class ArchitectureTest {

    /** What users compile against: annotations, exceptions, IdempotencyManager, RequestKey, events, metrics, the SPI. */
    static final String[] API = {"dev.idempotency", "dev.idempotency.spi", "dev.idempotency.events", "dev.idempotency.metrics"};

    static JavaClasses library;

    @BeforeAll
    static void importTheLibrary() {
        library = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("dev.idempotency");
    }

    @Test
    void theApiAndTheSpiImportNothingInternal() {
        classes().that().resideInAnyPackage(API)
                .should().onlyDependOnClassesThat().resideInAnyPackage(
                        "dev.idempotency", "dev.idempotency.spi", "dev.idempotency.events", "dev.idempotency.metrics",
                        "java..", "jakarta..")
                .because("the public API is what users compile against: internals must stay free to move")
                .check(library);
    }

    /**
     * A door (the interceptor, the HTTP filter, the manager, the message consumer: everything outside the engine's
     * package) runs its calls through the {@code ClaimFlow} chosen for the method and settles a {@code Claimed}; it never
     * names a claim mode's flow, its held transaction or its claim handle, so adding a claim mode touches no door.
     */
    @Test
    void noDoorNamesAClaimModesFlow() {
        noClasses().that().resideOutsideOfPackage("dev.idempotency.core")
                .should().dependOnClassesThat().haveFullyQualifiedName("dev.idempotency.core.AtomicFlow")
                .orShould().dependOnClassesThat().haveFullyQualifiedName("dev.idempotency.core.LeasedFlow")
                .orShould().dependOnClassesThat().haveFullyQualifiedName("dev.idempotency.core.AtomicHold")
                .orShould().dependOnClassesThat().haveFullyQualifiedName("dev.idempotency.core.HeldTransaction")
                .because("the claim mode is chosen once, when the application starts; a door never branches on it")
                .check(library);
    }

    /** The doors: each a room of its own, reached by the application through the container. */
    static final String[] DOORS = {"dev.idempotency.interceptor", "dev.idempotency.messaging", "dev.idempotency.functional",
            "dev.idempotency.manager", "dev.idempotency.jaxrs", "dev.idempotency.health"};

    /**
     * No door imports another: what they share (the assembled engine, the deployment's settings, the codec, a method's
     * reader) is the runtime's, below them. The interceptor asks the reader chosen for its method, and names no message
     * type: a new kind of message is a reader in the messaging room, and touches no other door.
     */
    @Test
    void noDoorImportsAnother() {
        for (String door : DOORS) {
            String[] others = java.util.Arrays.stream(DOORS).filter(d -> !d.equals(door)).toArray(String[]::new);
            noClasses().that().resideInAPackage(door)
                    .should().dependOnClassesThat().resideInAnyPackage(others)
                    .because("a door is one room: what doors share lives in the runtime")
                    .check(library);
        }
    }

    /** The interceptor knows no message type: JMS, Reactive Messaging and every broker are its readers' business. */
    @Test
    void theInterceptorNamesNoMessageType() {
        noClasses().that().resideInAPackage("dev.idempotency.interceptor")
                .should().dependOnClassesThat().resideInAnyPackage("jakarta.jms..", "org.eclipse.microprofile.reactive..",
                        "io.smallrye..", "org.apache.kafka..", "com.rabbitmq..", "io.vertx..")
                .because("a method's reader, chosen when the application starts, reads its messages")
                .check(library);
    }

    /**
     * Only the wiring knows the container's extension mechanisms (portable and build compatible extensions, bean
     * registration): the wiring itself, and Helidon's adapters, which register beans where Helidon needs them. The runtime
     * may ask the container's {@code BeanManager} for its contexts and events; no door does.
     */
    @Test
    void onlyTheWiringKnowsTheContainer() {
        noClasses().that().resideOutsideOfPackages("dev.idempotency.cdi", "dev.idempotency.adapter..")
                .should().dependOnClassesThat().resideInAnyPackage("jakarta.enterprise.inject.build.compatible..")
                .orShould().dependOnClassesThat().areAssignableTo(jakarta.enterprise.inject.spi.Extension.class)
                .orShould().dependOnClassesThat().haveFullyQualifiedName("jakarta.enterprise.inject.spi.AfterBeanDiscovery")
                .orShould().dependOnClassesThat().haveFullyQualifiedName("jakarta.enterprise.inject.spi.BeforeBeanDiscovery")
                .because("the wiring registers the library's beans; everything else is a bean, or plain Java")
                .check(library);
        // (CDI.current() excepted: a JAX-RS provider that the JAX-RS runtime creates finds the runtime bean through it)
        noClasses().that().resideInAnyPackage(DOORS)
                .should().dependOnClassesThat(JavaClass.Predicates.resideInAPackage("jakarta.enterprise.inject.spi..")
                        .and(com.tngtech.archunit.base.DescribedPredicate.not(
                                JavaClass.Predicates.equivalentTo(jakarta.enterprise.inject.spi.CDI.class))))
                .because("a door asks the runtime, not the container")
                .check(library);
        noClasses().that().resideOutsideOfPackage("dev.idempotency.cdi")
                .should().dependOnClassesThat().resideInAPackage("dev.idempotency.cdi")
                .because("the wiring is the top floor: it knows every room, and no room knows it")
                .check(library);
    }

    /** A runtime's adapters (Helidon's) are loaded only on that runtime: the runtime room and the doors never name them. */
    @Test
    void onlyTheWiringNamesHelidonsAdapters() {
        noClasses().that().resideOutsideOfPackages("dev.idempotency.cdi", "dev.idempotency.adapter..")
                .should().dependOnClassesThat().resideInAPackage("dev.idempotency.adapter..")
                .because("a runtime's adapters are one room, that only the wiring opens")
                .check(library);
    }

    @Test
    void theSpiKnowsNoCdi() {
        noClasses().that().resideInAPackage("dev.idempotency.spi")
                .should().dependOnClassesThat().resideInAnyPackage("jakarta.enterprise..", "jakarta.inject..")
                .because("a store or a cache of one's own is plain Java")
                .check(library);
    }

    @Test
    void theEngineKnowsNoFramework() {
        noClasses().that().resideInAPackage("dev.idempotency.core")
                .should().dependOnClassesThat().resideInAnyPackage("jakarta..", "javax..", "org.infinispan..",
                        "org.eclipse.microprofile..", "org.hibernate..", "org.eclipse.persistence..",
                        "dev.idempotency.cdi..", "dev.idempotency.config..", "dev.idempotency.jaxrs..",
                        "dev.idempotency.jta..", "dev.idempotency.store..", "dev.idempotency.cache..",
                        "dev.idempotency.runtime..", "dev.idempotency.interceptor..", "dev.idempotency.messaging..",
                        "dev.idempotency.functional..", "dev.idempotency.manager..", "dev.idempotency.observability..",
                        "dev.idempotency.health..", "dev.idempotency.adapter..")
                .because("STYLE: a core that knows no framework, tested in milliseconds")
                .check(library);
    }

    /**
     * The Hot Rod client is an optional dependency: only {@code idempotency.cache.mode=remote} may load a class that
     * names it. So only RemoteCaches (and its listener) name the client, and outside the cache package nobody calls
     * RemoteCaches but to start that mode ({@link dev.idempotency.cache.HotRodClient} says whether the client is here).
     * Every deployment without the client once failed when a check of its presence lived in RemoteCaches.
     */
    @Test
    void theOptionalHotRodClientIsLoadedOnlyInRemoteMode() {
        String remoteCaches = dev.idempotency.cache.RemoteCaches.class.getName();
        noClasses().that().doNotHaveFullyQualifiedName(remoteCaches)
                .and().haveNameNotMatching(java.util.regex.Pattern.quote(remoteCaches) + "\\$.*")
                .should().dependOnClassesThat().resideInAPackage("org.infinispan.client.hotrod..")
                .because("the Hot Rod client is optional: the other cache modes run without it")
                .check(library);
        noClasses().that().resideOutsideOfPackage("dev.idempotency.cache")
                .should().callMethodWhere(com.tngtech.archunit.core.domain.JavaCall.Predicates.target(
                        com.tngtech.archunit.core.domain.properties.HasOwner.Predicates.With.owner(
                                com.tngtech.archunit.core.domain.properties.HasName.Predicates.name(remoteCaches)))
                        .and(com.tngtech.archunit.core.domain.JavaCall.Predicates.target(
                                com.tngtech.archunit.base.DescribedPredicate.not(
                                        com.tngtech.archunit.core.domain.properties.HasName.Predicates.name("start")))))
                .because("loading RemoteCaches loads the Hot Rod client: only the remote mode's start may")
                .check(library);
    }

    @Test
    void noCirclesBetweenPackages() {
        slices().assignedFrom(new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass c) {
                return SliceIdentifier.of(c.getPackageName());
            }

            @Override
            public String getDescription() {
                return "the packages of dev.idempotency";
            }
        }).should().beFreeOfCycles().check(library);
    }

    @Test
    void everyPackageSaysWhetherItIsApi() throws IOException {
        try (Stream<Path> dirs = Files.walk(Path.of("src/main/java/dev/idempotency"))) {
            List<Path> missing = dirs.filter(Files::isDirectory)
                    .filter(d -> {
                        try (Stream<Path> f = Files.list(d)) {
                            return f.anyMatch(p -> p.toString().endsWith(".java"));
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    })
                    .filter(d -> !Files.exists(d.resolve("package-info.java")))
                    .toList();
            assertThat(missing).isEmpty();
        }
    }
}
