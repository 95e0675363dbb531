package dev.idempotency.manager;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyInvalidException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyManager;
import dev.idempotency.IdempotencyResponseNotFoundException;
import dev.idempotency.IdempotencyTransferException;
import dev.idempotency.RequestKey;
import dev.idempotency.core.Decision;
import dev.idempotency.core.Policy;
import dev.idempotency.core.Fingerprint;
import dev.idempotency.core.KeyRules;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.Sighting;
import dev.idempotency.events.ResponseStored;
import dev.idempotency.spi.Deletion;
import dev.idempotency.spi.IdempotencyRecord;
import dev.idempotency.spi.RecordStatus;
import dev.idempotency.spi.ScopedKey;
import dev.idempotency.spi.Ticket;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Event;
import jakarta.inject.Inject;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import dev.idempotency.runtime.IdempotencyRuntime;
import dev.idempotency.runtime.Callers;

/**
 * The transfer file of {@code IdempotencyManager.export} and {@code importFrom}: a header line, then one record a line
 * as JSON, each with a check of its content and place. An export reads the store in batches; an import checks the whole
 * file before it writes anything, then writes it in the store's one transaction, all or nothing.
 *
 * <p>Over 400 lines on purpose: a file format's writer and reader, with every rule a line must meet, in one place
 * (header, checks, limits); split, the format's rules would live in two rooms that must change together. Its record's
 * JSON form is {@link ExportedRecord}.
 */
public final class TransferFile {

    private static final java.util.logging.Logger LOG = java.util.logging.Logger.getLogger(TransferFile.class.getName());

    private TransferFile() {
    }

    static int export(IdempotencyEngine engine, Path file) {
        // The sightings this node has seen and the store not yet recorded go in first, so that the file carries each
        // record's latest "last seen" this node knows (a restore would otherwise move it back).
        try {
            engine.flushSightings();
        } catch (RuntimeException e) {
            java.util.logging.Logger.getLogger(TransferFile.class.getName()).log(java.util.logging.Level.WARNING,
                    "Could not record this node's last sightings before the export; the file has the store's", e);
        }
        // The records, one at a time, to a file of their own beside the export (the store is read in batches: an export
        // of any size holds few records at a time); then the header, which announces their count, and them.
        Path dir = file.toAbsolutePath().getParent();
        Path body = null;
        Path tmp = null;
        try (Jsonb jsonb = JsonbBuilder.create()) {
            body = Files.createTempFile(dir, file.getFileName().toString(), ".records");
            int[] count = {0};
            try (BufferedWriter out = Files.newBufferedWriter(body, StandardCharsets.UTF_8)) {
                engine.forEachRecord(r -> {
                    ExportedRecord e = ExportedRecord.of(r);
                    e.check = ExportedRecord.check(++count[0], jsonb.toJson(e));
                    try {
                        out.write(jsonb.toJson(e));
                        out.newLine();
                    } catch (IOException io) {
                        throw new java.io.UncheckedIOException(io);
                    }
                });
            }
            tmp = Files.createTempFile(dir, file.getFileName().toString(), ".part");
            try (java.io.OutputStream out = Files.newOutputStream(tmp)) {
                out.write((jsonb.toJson(new ExportHeader(ExportHeader.FORMAT, ExportHeader.VERSION, count[0])) + System.lineSeparator())
                        .getBytes(StandardCharsets.UTF_8));
                Files.copy(body, out);
            }
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            tmp = null;
            return count[0];
        } catch (IOException e) {
            throw new IdempotencyTransferException("Could not write the export " + file + ": " + e.getMessage(), e);
        } catch (java.io.UncheckedIOException e) {
            throw new IdempotencyTransferException("Could not write the export " + file + ": " + e.getCause().getMessage(), e.getCause());
        } catch (dev.idempotency.IdempotencyStoreException | UnsupportedOperationException e) {
            throw e; // the store's failure, or a store without management: as they are
        } catch (Exception e) {
            throw new IdempotencyTransferException("Could not write the export " + file + ": " + e, e);
        } finally {
            deleteQuietly(body);
            deleteQuietly(tmp);
        }
    }

    private static void deleteQuietly(Path p) {
        if (p != null) {
            try {
                Files.deleteIfExists(p);
            } catch (IOException e) {
                LOG.log(java.util.logging.Level.FINE, "Could not delete " + p, e);
            }
        }
    }

    /**
     * The longest line an import reads, in characters: a record whose stored response is at the stored form's limit
     * (16 MiB, 22.4 million characters in base64) fits; a longer line is refused before it is read whole.
     */
    static final int MAX_LINE = 24 << 20;

    /**
     * Reads and checks every line before anything is written (all or nothing: a refused file leaves the store as it
     * was). Refused, naming the line: a line that is not JSON or not a record, a record that is not whole (no
     * namespace, an unknown status, a finished record without its completion time), a line over {@link #MAX_LINE}, a
     * key that an earlier line already had, and (version 2, which every export since writes) a record whose check does
     * not match its content and its place: edited by hand, moved or repeated. A file that ends before the count its
     * header announces is truncated; one with more records than announced is refused too.
     */
    static int importFrom(IdempotencyEngine engine, Path file) {
        int count;
        try (Jsonb jsonb = JsonbBuilder.create()) {
            // First every line is read and checked, keeping only the keys (to refuse a repeated one); then the file is
            // read again and its records written as they are read, in the store's one transaction: an import of any
            // size holds few records at a time, and still writes all or nothing.
            count = read(file, jsonb);
            RecordsOf records = new RecordsOf(file, jsonb, count);
            try {
                count = engine.importEach(() -> records);
            } finally {
                records.close();
            }
        } catch (IdempotencyTransferException e) {
            throw e;
        } catch (dev.idempotency.spi.StoreManagement.LiveClaimException e) {
            throw new IdempotencyTransferException(file + " holds a record for the " + e.key() + ", which a call still running"
                    + " has claimed (replaced, the call's retry would get an answer it did not give); nothing was imported."
                    + " Import when that call has finished, or into a store that is not in use", e);
        } catch (RuntimeException e) {
            for (Throwable c = e; c != null; c = c.getCause()) {
                if (c instanceof TransferFailed failed) {
                    throw failed.failure; // the file, read again, was not what was checked: the store wrote nothing
                }
            }
            throw e;
        } catch (Exception e) {
            throw new IdempotencyTransferException(file + " is corrupt: " + e.getMessage(), e);
        }
        return count;
    }

    /** An import's failure while the store writes: the transfer exception it is, carried through the store's own code. */
    private static final class TransferFailed extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final transient IdempotencyTransferException failure;

        TransferFailed(IdempotencyTransferException failure) {
            super(failure.getMessage(), failure, false, false);
            this.failure = failure;
        }
    }

    /** The file's records, read again one at a time as the store writes them (the file was checked whole before). */
    private static final class RecordsOf implements java.util.Iterator<IdempotencyRecord> {
        private final List<IdempotencyRecord> pending = new ArrayList<>(1);
        private final Path file;
        private final Jsonb jsonb;
        private final int expected;
        private int read;
        private BufferedReader in;
        private Lines lines;
        private ExportHeader header;
        private final jakarta.json.JsonReaderFactory json = jakarta.json.Json.createReaderFactory(java.util.Map.of());

        RecordsOf(Path file, Jsonb jsonb, int expected) {
            this.file = file;
            this.jsonb = jsonb;
            this.expected = expected;
        }

        private boolean done;

        @Override
        public boolean hasNext() {
            if (!pending.isEmpty()) {
                return true;
            }
            if (done) {
                return false;
            }
            try {
                if (in == null) {
                    in = Files.newBufferedReader(file, StandardCharsets.UTF_8);
                    lines = new Lines(in);
                    header = jsonb.fromJson(wellFormed(json, lines.next(4096)), ExportHeader.class);
                }
                String line;
                while ((line = lines.next(MAX_LINE)) != null) {
                    if (!line.isBlank()) {
                        pending.add(record(file, jsonb, json, header, line, lines.number, ++read));
                        return true;
                    }
                }
                done = true;
                close();
                if (read != expected) {
                    throw new IdempotencyTransferException(file + " changed during its import; nothing was imported");
                }
                return false;
            } catch (IdempotencyTransferException e) {
                close();
                throw new TransferFailed(e);
            } catch (IOException | RuntimeException e) {
                close();
                throw new TransferFailed(new IdempotencyTransferException(file + " could not be read again during its import"
                        + " (changed?); nothing was imported: " + e.getMessage(), e));
            }
        }

        private void close() {
            done = true;
            if (in != null) {
                try {
                    in.close();
                } catch (IOException e) {
                    LOG.log(java.util.logging.Level.FINE, "Could not close " + file, e);
                }
            }
        }

        @Override
        public IdempotencyRecord next() {
            if (!hasNext()) {
                throw new java.util.NoSuchElementException();
            }
            return pending.remove(0);
        }
    }

    /**
     * Reads and checks every line (all or nothing: before anything is written). Refused, naming the line: a
     * line that is not JSON or not a record, a record that is not whole (no namespace, an unknown status, a finished
     * record without its completion time), a line over {@link #MAX_LINE}, a key that an earlier line already had, and
     * (version 2, which every export since writes) a record whose check does not match its content and its place:
     * edited by hand, moved or repeated. A file that ends before the count its header announces is truncated; one with
     * more records than announced is refused too. Keeps the keys alone, not the records.
     *
     * @return how many records the file holds
     */
    private static int read(Path file, Jsonb jsonb) {
        int count = 0;
        try (BufferedReader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            jakarta.json.JsonReaderFactory json = jakarta.json.Json.createReaderFactory(java.util.Map.of());
            Lines lines = new Lines(in);
            String first = lines.next(4096);
            ExportHeader header = first == null ? null : jsonb.fromJson(wellFormed(json, first), ExportHeader.class);
            if (header == null || !ExportHeader.FORMAT.equals(header.format)
                    || (header.version != ExportHeader.VERSION && header.version != 1)) {
                throw new IdempotencyTransferException(file + " is not an idempotency-jakarta export of version 1 or "
                        + ExportHeader.VERSION);
            }
            java.util.Map<ScopedKey, Integer> lineOf = new java.util.HashMap<>();
            String line;
            while ((line = lines.next(MAX_LINE)) != null) {
                int lineNumber = lines.number;
                if (line.isBlank()) {
                    continue;
                }
                if (count == header.records) {
                    throw new IdempotencyTransferException(file + " holds more records than its header announces ("
                            + header.records + "): line " + lineNumber + " is one too many");
                }
                IdempotencyRecord record = record(file, jsonb, json, header, line, lineNumber, count + 1);
                Integer earlier = lineOf.putIfAbsent(record.scopedKey(), lineNumber);
                if (earlier != null) {
                    throw new IdempotencyTransferException(file + " repeats a key at line " + lineNumber + ": line " + earlier
                            + " has the same namespace, principal and key");
                }
                count++;
            }
            if (count != header.records) {
                throw new IdempotencyTransferException(file + " is truncated: its header announces " + header.records
                        + " records, it holds " + count + " and ends at line " + lines.number);
            }
            return count;
        } catch (IdempotencyTransferException e) {
            throw e;
        } catch (LineTooLong e) {
            throw new IdempotencyTransferException(file + " has a line over " + e.limit + " characters at line " + e.lineNumber
                    + "; nothing was imported");
        } catch (IOException e) {
            throw new IdempotencyTransferException("Could not read " + file + ": " + e.getMessage(), e);
        } catch (Exception e) {
            throw new IdempotencyTransferException(file + " is corrupt: " + e.getMessage(), e);
        }
    }

    /** One line's record, checked: its check (version 2) against its content and place, and its being whole. */
    private static IdempotencyRecord record(Path file, Jsonb jsonb, jakarta.json.JsonReaderFactory json, ExportHeader header,
                                            String line, int lineNumber, int ordinal) {
        try {
            ExportedRecord e = jsonb.fromJson(wellFormed(json, line), ExportedRecord.class);
            if (header.version >= 2 && !e.checked(ordinal, jsonb)) {
                throw new IdempotencyTransferException(file + " was changed after its export at line " + lineNumber
                        + ": the record's check does not match its content and its place (edited, moved or repeated)");
            }
            String problem = e.problem();
            if (problem != null) {
                throw new IdempotencyTransferException(file + " is corrupt at line " + lineNumber + ": the record " + problem);
            }
            return e.toRecord();
        } catch (IdempotencyTransferException e) {
            throw e;
        } catch (RuntimeException e) {
            throw new IdempotencyTransferException(file + " is corrupt at line " + lineNumber, e);
        }
    }

    /** A line over the limit, found before it was read whole. */
    private static final class LineTooLong extends IOException {
        final int limit;
        final int lineNumber;

        LineTooLong(int limit, int lineNumber) {
            super("line " + lineNumber + " is over " + limit + " characters");
            this.limit = limit;
            this.lineNumber = lineNumber;
        }
    }

    /** The lines of a file, numbered from 1, each read up to a limit and no further. */
    private static final class Lines {
        private final BufferedReader in;
        int number;

        Lines(BufferedReader in) {
            this.in = in;
        }

        /** The next line without its end (\n, \r\n or \r), or null at the end of the file. */
        String next(int limit) throws IOException {
            StringBuilder b = new StringBuilder();
            int c;
            while ((c = in.read()) >= 0) {
                if (c == '\n' || c == '\r') {
                    if (c == '\r') {
                        in.mark(1);
                        if (in.read() != '\n') {
                            in.reset();
                        }
                    }
                    number++;
                    return b.toString();
                }
                if (b.length() == limit) {
                    throw new LineTooLong(limit, number + 1);
                }
                b.append((char) c);
            }
            if (b.length() == 0) {
                return null;
            }
            number++;
            return b.toString();
        }
    }

    /**
     * The line, once JSON-P has read it whole: a JsonException (corrupt) when it is not JSON. Checked before JSON-B
     * binds it, because JSON-B skips a member the class does not have without reading it to its end, and Yasson 3.0
     * with Parsson 1.1 never returns from skipping one cut short or malformed ({@code {"x":[1}}): a corrupt export hung
     * the import (found by ExportImportFuzzTest).
     */
    private static String wellFormed(jakarta.json.JsonReaderFactory json, String line) {
        try (jakarta.json.JsonReader reader = json.createReader(new java.io.StringReader(line))) {
            reader.readValue();
        }
        return line;
    }

    /** The export file's first line. Version 2 adds each record's {@code check}; version 1 files are still read. */
    public static class ExportHeader {
        static final String FORMAT = "idempotency-jakarta-export";
        static final int VERSION = 2;
        public String format;
        public int version;
        public int records;

        public ExportHeader() {
        }

        ExportHeader(String format, int version, int records) {
            this.format = format;
            this.version = version;
            this.records = records;
        }
    }
}
