package dev.idempotency;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** The engine knows no framework (STYLE: a core that knows no framework). */
class ArchitectureTest {

    @Test
    void theCoreImportsNothingFromJakarta() throws IOException {
        List<String> offenders;
        try (Stream<Path> files = Files.walk(Path.of("src/main/java/dev/idempotency/core"))) {
            offenders = files.filter(p -> p.toString().endsWith(".java"))
                    .filter(p -> {
                        try {
                            return Files.readString(p).contains("jakarta.");
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    })
                    .map(Path::toString)
                    .toList();
        }
        assertThat(offenders).isEmpty();
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
