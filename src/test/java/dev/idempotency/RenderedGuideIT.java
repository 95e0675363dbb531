package dev.idempotency;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import org.junit.jupiter.api.Test;

/**
 * Every link of the rendered guide resolves: failsafe runs this after the guide is rendered to target/docs (at
 * prepare-package, with README.md, BENCHMARKS.md and CONTRIBUTING.md copied to target/ for the pages' {@code ../}
 * links; pom.xml). The unit-test phase comes before the render, so DocumentationTest can only check a render left
 * from an earlier build.
 */
class RenderedGuideIT {

    @Test
    void everyLinkOfTheRenderedGuideResolves() throws IOException {
        assertThat(DocumentationTest.RENDERED.resolve("index.html"))
                .as("the guide rendered at prepare-package (pom.xml, execution user-guide)")
                .isRegularFile();
        assertThat(DocumentationTest.brokenRenderedLinks(DocumentationTest.RENDERED))
                .as("broken links in the rendered guide")
                .isEmpty();
    }
}
