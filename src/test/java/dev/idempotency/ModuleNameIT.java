package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import java.util.jar.Manifest;
import org.junit.jupiter.api.Test;

/**
 * The built jar names its module: {@code Automatic-Module-Name: dev.idempotency} in its manifest. Failsafe runs
 * this after {@code package} and passes the jar's path as {@code idempotency.jar} (pom.xml).
 */
class ModuleNameIT {

    @Test
    void theJarsManifestNamesTheModule() throws IOException {
        String configured = System.getProperty("idempotency.jar");
        assertThat(configured)
                .as("the system property idempotency.jar (set by the failsafe configuration in pom.xml)")
                .isNotBlank();
        Path jar = Path.of(configured);
        assertThat(Files.isRegularFile(jar)).as("the built jar %s exists", jar).isTrue();

        try (JarFile file = new JarFile(jar.toFile())) {
            Manifest manifest = file.getManifest();
            assertThat(manifest).as("the manifest of %s", jar).isNotNull();
            Attributes main = manifest.getMainAttributes();
            assertThat(main.getValue("Automatic-Module-Name")).isEqualTo("dev.idempotency");
            // WildFly's module dependency stays next to it
            assertThat(main.getValue("Dependencies")).isEqualTo("jdk.unsupported");
        }
    }
}
