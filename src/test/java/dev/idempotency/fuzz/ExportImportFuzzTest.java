package dev.idempotency.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.idempotency.IdempotencyTransferException;
import dev.idempotency.manager.IdempotencyManagerBean;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.store.memory.InMemoryIdempotencyStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The export file read by {@code IdempotencyManager.importFrom} (JSON Lines: a header line, then one record a line).
 * The manager bean is built by hand over an in-memory store (no CDI container: importFrom uses only the engine).
 * The contract: any file is imported (its count returned) or refused with {@link IdempotencyTransferException}, never
 * another exception, and a refused file changes nothing; an imported file exports to a file that imports and exports
 * to the same text.
 */
class ExportImportFuzzTest {

    private static Path dir;

    @BeforeAll
    static void directory() throws IOException {
        dir = Files.createTempDirectory("import-fuzz");
    }

    @AfterAll
    static void clean() throws IOException {
        try (var files = Files.list(dir)) {
            files.forEach(f -> f.toFile().delete());
        }
        Files.deleteIfExists(dir);
    }

    @FuzzTest(maxDuration = Internals.MAX_DURATION)
    void importFrom(byte[] input) throws IOException {
        Path file = dir.resolve("input.jsonl");
        Files.write(file, input);
        InMemoryIdempotencyStore store = new InMemoryIdempotencyStore();
        IdempotencyManagerBean manager = manager(store);
        int imported;
        try {
            imported = manager.importFrom(file);
        } catch (IdempotencyTransferException e) {
            assertThat(store.all()).as("a refused file changes nothing").isEmpty();
            return;
        }
        assertThat(imported).isGreaterThanOrEqualTo(store.all().size());

        Path first = dir.resolve("first.jsonl");
        manager.export(first);
        InMemoryIdempotencyStore again = new InMemoryIdempotencyStore();
        assertThat(manager(again).importFrom(first)).isEqualTo(store.all().size());
        Path second = dir.resolve("second.jsonl");
        manager(again).export(second);
        // the same records (in any order: records first seen at the same instant may be written in either order)
        assertThat(read(second)).containsExactlyInAnyOrderElementsOf(read(first));
    }

    static IdempotencyManagerBean manager(InMemoryIdempotencyStore store) {
        IdempotencyManagerBean manager = new IdempotencyManagerBean();
        Internals.set(manager, "engine", IdempotencyEngine.simple(store,
                Clock.fixed(Instant.parse("2026-11-25T00:00:00Z"), ZoneOffset.UTC), "fuzz"));
        return manager;
    }

    private static java.util.List<String> read(Path file) {
        try {
            return Files.readAllLines(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
