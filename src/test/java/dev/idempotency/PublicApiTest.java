package dev.idempotency;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Constructor;
import java.lang.reflect.Field;
import java.lang.reflect.Member;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The public API, recorded: every public and protected type and member of the API packages ({@code dev.idempotency},
 * {@code .spi}, {@code .events}, {@code .metrics}) as one line each, in {@code api/idempotency-jakarta.api}. A change to
 * the API that the file does not show fails here, so that no change breaks users by accident. To change the API on
 * purpose: {@code mvn test -Dtest=PublicApiTest -Didempotency.api.update=true}, and commit the file with the change.
 */
class PublicApiTest {

    static final Path FILE = Path.of("api", "idempotency-jakarta.api");

    @Test
    void theApiIsTheRecordedOne() throws IOException {
        List<String> actual = api();
        if (Boolean.getBoolean("idempotency.api.update")) {
            Files.createDirectories(FILE.getParent());
            Files.write(FILE, actual, StandardCharsets.UTF_8);
        }
        assertThat(Files.exists(FILE)).as("%s exists (write it with -Didempotency.api.update=true)", FILE).isTrue();
        List<String> recorded = Files.readAllLines(FILE, StandardCharsets.UTF_8);
        List<String> added = new ArrayList<>(actual);
        added.removeAll(recorded);
        List<String> removed = new ArrayList<>(recorded);
        removed.removeAll(actual);
        assertThat(added.isEmpty() && removed.isEmpty())
                .as("The public API differs from %s.%n  In the code, not in the file:%n    %s%n  In the file, not in the code:%n    %s%n"
                                + "If the change is meant (a removal or a changed signature breaks users: see the README's Versioning),"
                                + " run  mvn test -Dtest=PublicApiTest -Didempotency.api.update=true  and commit %s with it.",
                        FILE, String.join("\n    ", added), String.join("\n    ", removed), FILE)
                .isTrue();
    }

    /** The API's lines: each public type (sorted), then its public and protected members (sorted), indented. */
    static List<String> api() {
        List<Class<?>> types = new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages(ArchitectureTest.API).stream()
                .filter(c -> Arrays.asList(ArchitectureTest.API).contains(c.getPackageName()))
                .<Class<?>>map(c -> c.reflect())
                .filter(PublicApiTest::visible)
                .sorted(java.util.Comparator.comparing(Class::getName))
                .toList();
        List<String> lines = new ArrayList<>();
        for (Class<?> type : types) {
            lines.add(header(type));
            TreeSet<String> members = new TreeSet<>();
            Stream.of(type.getDeclaredConstructors()).filter(PublicApiTest::visible).map(Constructor::toGenericString).forEach(members::add);
            Stream.of(type.getDeclaredMethods()).filter(m -> visible(m) && !m.isSynthetic() && !m.isBridge())
                    .map(Method::toGenericString).forEach(members::add);
            Stream.of(type.getDeclaredFields()).filter(f -> visible(f) && !f.isSynthetic()).map(Field::toGenericString).forEach(members::add);
            members.forEach(m -> lines.add("  " + m));
        }
        return lines;
    }

    private static boolean visible(Class<?> type) {
        for (Class<?> c = type; c != null; c = c.getDeclaringClass()) {
            if (!Modifier.isPublic(c.getModifiers()) && !Modifier.isProtected(c.getModifiers())) {
                return false;
            }
        }
        return !type.isAnonymousClass() && !type.isLocalClass() && !type.isSynthetic();
    }

    private static boolean visible(Member m) {
        return Modifier.isPublic(m.getModifiers()) || Modifier.isProtected(m.getModifiers());
    }

    /** The type's declaration; "sealed" is written as its permitted subtypes (JDK 17 and 25 print it differently). */
    private static String header(Class<?> type) {
        StringBuilder s = new StringBuilder(type.toGenericString().replace("non-sealed ", "").replace("sealed ", ""));
        if (type.getGenericSuperclass() != null && type.getSuperclass() != Object.class && !type.isEnum() && !type.isRecord()) {
            s.append(" extends ").append(type.getGenericSuperclass().getTypeName());
        }
        java.lang.reflect.Type[] interfaces = type.getGenericInterfaces();
        if (interfaces.length > 0 && !type.isAnnotation()) {
            s.append(type.isInterface() ? " extends " : " implements ")
                    .append(String.join(", ", Stream.of(interfaces).map(java.lang.reflect.Type::getTypeName).toList()));
        }
        if (type.isSealed()) {
            s.append(" permits ").append(String.join(", ", Stream.of(type.getPermittedSubclasses()).map(Class::getName).sorted().toList()));
        }
        return s.toString();
    }
}
