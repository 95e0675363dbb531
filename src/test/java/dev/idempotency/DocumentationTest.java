package dev.idempotency;

import dev.idempotency.config.ConfigErrors;
import dev.idempotency.config.ConfigKey;
import dev.idempotency.config.GlobalSettings;
import dev.idempotency.testing.IdempotencyWeld;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The user guide (docs/*.adoc) stays true to the code: its configuration, metrics, problem-type, exception and
 * options tables list what the code has; and every local link and anchor in the guide and the README resolves.
 *
 * <p>Tables are AsciiDoc tables written one row per line ({@code | `key` | default | meaning}) inside
 * {@code |===} delimiters, the first row the header; a table is found as the first one after its section's or its
 * own explicit id ({@code [#id]}).
 */
class DocumentationTest {

    static final Path DOCS = Path.of("docs");

    static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static String page(String name) {
        return read(DOCS.resolve(name));
    }

    /** The rows (header left out) of the first table after {@code [#id]} on a page: each row's cells, unquoted. */
    static List<List<String>> table(String pageName, String id) {
        String text = page(pageName);
        int at = text.indexOf("[#" + id + "]");
        assertThat(at).as("[#%s] on %s", id, pageName).isNotNegative();
        int open = text.indexOf("\n|===\n", at);
        int close = text.indexOf("\n|===\n", open + 1);
        if (close < 0) {
            close = text.indexOf("\n|===", open + 1);
        }
        assertThat(open).as("a table after [#%s] on %s", id, pageName).isNotNegative();
        List<List<String>> rows = new ArrayList<>();
        boolean header = true;
        for (String line : text.substring(open + 5, close).split("\n")) {
            if (!line.startsWith("|")) {
                continue;
            }
            if (header) {
                header = false;
                continue;
            }
            rows.add(cells(line));
        }
        return rows;
    }

    /** {@code | a | `b | c` | d} to [a, `b | c`, d]: a cell ends at " |" outside a monospace span. */
    static List<String> cells(String row) {
        List<String> cells = new ArrayList<>();
        StringBuilder cell = new StringBuilder();
        boolean code = false;
        for (int i = 1; i < row.length(); i++) {
            char c = row.charAt(i);
            if (c == '`') {
                code = !code;
            }
            if (c == '|' && !code && row.charAt(i - 1) == ' ' && row.charAt(i - 2) != '\\') {
                cells.add(unquote(cell.toString().strip()));
                cell.setLength(0);
            } else {
                cell.append(c);
            }
        }
        cells.add(unquote(cell.toString().strip()));
        return cells;
    }

    /** A literal monospace span {@code `+x+`} reads as {@code `x`}. */
    static String unquote(String cell) {
        return cell.replace("`+", "`").replace("+`", "`");
    }

    static List<String> firstColumn(String pageName, String id) {
        return table(pageName, id).stream().map(r -> r.get(0)).toList();
    }

    /** Rows of the configuration table: key to default. */
    static Map<String, String> configRows() {
        Map<String, String> rows = new LinkedHashMap<>();
        for (List<String> row : table("configuration.adoc", "keys-table")) {
            Matcher m = Pattern.compile("`(idempotency\\.[a-z.-]+)`").matcher(row.get(0));
            if (m.matches()) {
                rows.put(m.group(1), row.get(1));
            }
        }
        return rows;
    }

    @Test
    void theConfigurationTableListsEveryKeyAndNoOther() {
        assertThat(configRows().keySet()).containsExactlyInAnyOrderElementsOf(GlobalSettings.KEYS);
    }

    @Test
    void theConfigurationTableStatesTheDefaults() {
        Map<String, String> expected = new LinkedHashMap<>();
        for (ConfigKey k : ConfigKey.values()) {
            expected.put(k.key(), k.documentedDefault().isEmpty() ? "none" : "`" + k.documentedDefault() + "`");
        }
        Map<String, String> rows = configRows();
        rows.remove("idempotency.jpa.*");
        assertThat(rows).containsExactlyInAnyOrderEntriesOf(expected);
    }

    /** The table's defaults are what the reader uses: each parses, and a deployment with none configured gets them. */
    @Test
    void theTablesDefaultsAreTheReadersDefaults() {
        ConfigErrors errors = new ConfigErrors();
        GlobalSettings d = GlobalSettings.read(IdempotencyWeld.config(Map.of()), errors);
        assertThat(errors.all()).isEmpty();
        assertThat(d.ttl()).hasToString(ConfigKey.TTL.defaultValue());
        assertThat(d.lease()).hasToString(ConfigKey.LEASE.defaultValue());
        assertThat(d.keepStatus()).hasToString(ConfigKey.KEEP_STATUS.defaultValue());
        assertThat(d.interceptorPriority()).hasToString(ConfigKey.INTERCEPTOR_PRIORITY.defaultValue());
        assertThat(d.replayHeaders()).isEqualTo(GlobalSettings.DEFAULT_REPLAY_HEADERS);
        assertThat(d.claim()).isEqualTo(dev.idempotency.ClaimMode.DEFAULT);
        assertThat(d.nodeId()).matches(".+-.+-[0-9a-f]{8}");
    }

    @Test
    void theMetricsTableListsEveryCounterAndTimer() {
        List<String> names = firstColumn("operations.adoc", "metrics");
        for (Enum<?> metric : Stream.concat(
                java.util.Arrays.stream(dev.idempotency.metrics.IdempotencyMetrics.Counter.values()),
                java.util.Arrays.stream(dev.idempotency.metrics.IdempotencyMetrics.Timer.values())).toList()) {
            String name = "idempotency." + metric.name().toLowerCase(Locale.ROOT).replace('_', '.');
            assertThat(names).contains("`" + name + "`");
        }
    }

    @Test
    void theProblemTypesAreListed() throws Exception {
        List<String> types = firstColumn("http.adoc", "problem-types");
        for (java.lang.reflect.Field f : Class.forName("dev.idempotency.jaxrs.Problems").getDeclaredFields()) {
            if (f.getType() == String.class && java.lang.reflect.Modifier.isStatic(f.getModifiers())) {
                f.setAccessible(true);
                String value = (String) f.get(null);
                if (value.startsWith("https://") && !value.endsWith("/")) {
                    assertThat(types).contains("`" + value + "`");
                }
            }
        }
    }

    @Test
    void theExceptionTableListsEveryException() throws IOException {
        Set<String> inCode;
        try (Stream<Path> files = Files.list(Path.of("src/main/java/dev/idempotency"))) {
            inCode = files.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith("Exception.java") && !n.equals("IdempotencyException.java"))
                    .map(n -> n.substring(0, n.length() - ".java".length()))
                    .collect(Collectors.toCollection(TreeSet::new));
        }
        Set<String> inDocs = new TreeSet<>();
        for (String cell : firstColumn("operations.adoc", "exceptions")) {
            Matcher m = Pattern.compile("`(Idempotency\\w+Exception)`").matcher(cell);
            if (m.matches()) {
                inDocs.add(m.group(1));
            }
        }
        assertThat(inDocs).isEqualTo(inCode);
    }

    @Test
    void theFunctionalApisOptionsTableListsEveryOption() {
        Set<String> inCode = java.util.Arrays.stream(dev.idempotency.IdempotencyOptions.class.getRecordComponents())
                .map(java.lang.reflect.RecordComponent::getName).collect(Collectors.toCollection(TreeSet::new));
        Set<String> inDocs = new TreeSet<>();
        for (String cell : firstColumn("functional.adoc", "functional")) {
            Matcher m = Pattern.compile("`(\\w+)`").matcher(cell);
            if (m.matches()) {
                inDocs.add(m.group(1));
            }
        }
        assertThat(inDocs).isEqualTo(inCode);
    }

    // ---- links ------------------------------------------------------------------------------------------------

    static final Pattern XREF = Pattern.compile("\\b(xref|link):([^\\s\\[]+)\\[");
    static final Pattern INTERNAL = Pattern.compile("<<([A-Za-z0-9_-]+)(?:,[^>]*)?>>");
    static final Pattern MD_LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    /** An explicit block id; one directly above another block id is overridden by it (the last wins), so not counted. */
    static final Pattern ADOC_ID = Pattern.compile("(?m)^\\[(?:#|\\[)([A-Za-z0-9_-]+)[^\\n]*\\n(?!\\[#|\\[\\[)");
    static final Pattern ADOC_INLINE_ID = Pattern.compile("\\[\\[([A-Za-z0-9_-]+)]]");
    static final Pattern ADOC_HEADING = Pattern.compile("(?m)^=+ (.+)$");
    static final Pattern MD_HEADING = Pattern.compile("(?m)^#+ (.+)$");

    /** The text outside listing blocks ({@code ----} in AsciiDoc, fences in Markdown): code is not linked. */
    static String prose(Path file) {
        StringBuilder out = new StringBuilder();
        boolean code = false;
        for (String line : read(file).split("\n", -1)) {
            if (line.equals("----") || line.startsWith("```")) {
                code = !code;
                out.append('\n');
                continue;
            }
            out.append(code ? "" : line).append('\n');
        }
        return out.toString();
    }

    /** The ids a file's links may name: explicit ids and auto ids in AsciiDoc, GitHub's heading slugs in Markdown. */
    static Set<String> ids(Path file) {
        String text = prose(file);
        Set<String> ids = new TreeSet<>();
        if (file.toString().endsWith(".adoc")) {
            for (Pattern p : List.of(ADOC_ID, ADOC_INLINE_ID)) {
                Matcher m = p.matcher(text);
                while (m.find()) {
                    ids.add(m.group(1));
                }
            }
            Matcher h = ADOC_HEADING.matcher(text);
            while (h.find()) {
                ids.add("_" + h.group(1).toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_").replaceAll("^_|_$", ""));
            }
        } else {
            Matcher h = MD_HEADING.matcher(text);
            while (h.find()) {
                ids.add(h.group(1).strip().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9 _-]", "").replace(' ', '-'));
            }
        }
        return ids;
    }

    /** Every broken local link or anchor in a file, each as "file: target (why)". */
    static List<String> brokenLinks(Path file) {
        String text = prose(file);
        List<String> targets = new ArrayList<>();
        if (file.toString().endsWith(".adoc")) {
            Matcher m = XREF.matcher(text);
            while (m.find()) {
                targets.add(m.group(2));
            }
            Matcher i = INTERNAL.matcher(text);
            while (i.find()) {
                targets.add("#" + i.group(1));
            }
        } else {
            Matcher m = MD_LINK.matcher(text);
            while (m.find()) {
                targets.add(m.group(1));
            }
        }
        List<String> broken = new ArrayList<>();
        for (String target : targets) {
            if (target.matches("^[a-z]+:.*") || target.startsWith("//")) {
                continue; // https:, mailto:: not local
            }
            int hash = target.indexOf('#');
            String path = hash < 0 ? target : target.substring(0, hash);
            String anchor = hash < 0 ? null : target.substring(hash + 1);
            Path to = path.isEmpty() ? file : file.toAbsolutePath().getParent().resolve(path).normalize();
            if (!Files.exists(to)) {
                broken.add(file + ": " + target + " (no file " + to + ")");
            } else if (anchor != null && !ids(to).contains(anchor)) {
                broken.add(file + ": " + target + " (no section id '" + anchor + "' in " + to.getFileName() + ")");
            }
        }
        return broken;
    }

    static List<Path> linkedFiles() throws IOException {
        List<Path> files = new ArrayList<>(List.of(Path.of("README.md"), Path.of("CONTRIBUTING.md"), BENCHMARKS));
        try (Stream<Path> docs = Files.list(DOCS)) {
            docs.filter(p -> p.toString().endsWith(".adoc")).sorted().forEach(files::add);
        }
        return files;
    }

    @Test
    void everyLocalLinkAndAnchorResolves() throws IOException {
        List<String> broken = new ArrayList<>();
        for (Path file : linkedFiles()) {
            broken.addAll(brokenLinks(file));
        }
        assertThat(broken).as("broken links").isEmpty();
    }

    @Test
    void theGuideLinksEveryPage() throws IOException {
        String index = page("index.adoc");
        try (Stream<Path> docs = Files.list(DOCS)) {
            for (Path p : docs.filter(p -> p.toString().endsWith(".adoc")).toList()) {
                String name = p.getFileName().toString();
                if (!name.equals("index.adoc")) {
                    assertThat(index).as("index.adoc links %s", name).contains("xref:" + name);
                }
            }
        }
    }

    // ---- diagrams ---------------------------------------------------------------------------------------------

    /** Box-drawing characters and arrows: what a flow drawn as text is made of. */
    static final Pattern TEXT_ART = Pattern.compile("[\u2500-\u257F\u2190-\u21FF\u25B2-\u25BC\u25BA\u25C4]|\\+--");

    /**
     * A flow is a PlantUML block ({@code [plantuml, name, svg]}), which the build draws as an SVG image that fits the
     * page: one drawn with characters in a listing block is wider than the page's column, and the browser wraps it.
     */
    @Test
    void noFlowIsDrawnWithCharacters() throws IOException {
        List<String> art = new ArrayList<>();
        try (Stream<Path> docs = Files.list(DOCS)) {
            for (Path page : docs.filter(p -> p.toString().endsWith(".adoc")).sorted().toList()) {
                String[] lines = read(page).split("\n", -1);
                boolean block = false;
                boolean diagram = false;
                for (int i = 0; i < lines.length; i++) {
                    if (lines[i].equals("----") || lines[i].equals("....")) {
                        diagram = !block && i > 0 && lines[i - 1].startsWith("[plantuml");
                        block = !block;
                    } else if (block && !diagram && TEXT_ART.matcher(lines[i]).find()) {
                        art.add(page + ":" + (i + 1) + ": " + lines[i].strip());
                    }
                }
            }
        }
        assertThat(art).as("flows drawn with characters: draw them as a [plantuml, name, svg] block").isEmpty();
    }

    // ---- the rendered guide -----------------------------------------------------------------------------------

    /** Where the build renders the guide: pom.xml, execution user-guide, at prepare-package. */
    static final Path RENDERED = Path.of("target", "docs");
    static final Pattern HTML_REF = Pattern.compile("\\s(?:href|src)=\"([^\"]*)\"");
    static final Pattern HTML_ID = Pattern.compile("\\sid=\"([^\"]+)\"");

    /**
     * Every relative {@code href} and {@code src} of the rendered pages that does not resolve, each as
     * "page: target (why)": the file it names exists (the pages' {@code ../README.md} is the copy the build puts
     * in target/), and so does its {@code #anchor} when the file is a page.
     */
    static List<String> brokenRenderedLinks(Path dir) throws IOException {
        List<Path> pages;
        try (Stream<Path> files = Files.list(dir)) {
            pages = files.filter(p -> p.toString().endsWith(".html")).sorted().toList();
        }
        assertThat(pages).as("pages in %s", dir).isNotEmpty();
        Map<Path, Set<String>> ids = new HashMap<>();
        List<String> broken = new ArrayList<>();
        for (Path page : pages) {
            Matcher m = HTML_REF.matcher(read(page));
            while (m.find()) {
                String target = m.group(1).replace("&amp;", "&");
                if (target.isEmpty() || target.matches("^[A-Za-z][A-Za-z0-9+.-]*:.*") || target.startsWith("//")) {
                    continue; // https:, mailto:, data:: not a file here
                }
                int hash = target.indexOf('#');
                String path = URLDecoder.decode((hash < 0 ? target : target.substring(0, hash)).replace("+", "%2B"),
                        StandardCharsets.UTF_8);
                String anchor = hash < 0 ? "" : target.substring(hash + 1);
                Path to = path.isEmpty() ? page : page.toAbsolutePath().getParent().resolve(path).normalize();
                if (!Files.isRegularFile(to)) {
                    broken.add(page + ": " + target + " (no file " + to + ")");
                } else if (!anchor.isEmpty() && to.toString().endsWith(".html")
                        && !ids.computeIfAbsent(to, DocumentationTest::htmlIds).contains(anchor)) {
                    broken.add(page + ": " + target + " (no id '" + anchor + "' in " + to.getFileName() + ")");
                }
            }
        }
        return broken;
    }

    static Set<String> htmlIds(Path page) {
        Set<String> ids = new TreeSet<>();
        Matcher m = HTML_ID.matcher(read(page));
        while (m.find()) {
            ids.add(m.group(1));
        }
        return ids;
    }

    /** The guide was rendered after its sources and the build last changed (so it is what they render to now). */
    static boolean renderedAndCurrent() throws IOException {
        Path index = RENDERED.resolve("index.html");
        if (!Files.isRegularFile(index)) {
            return false;
        }
        long rendered = Files.getLastModifiedTime(index).toMillis();
        List<Path> sources = new ArrayList<>(linkedFiles());
        sources.add(Path.of("pom.xml"));
        for (Path source : sources) {
            if (Files.getLastModifiedTime(source).toMillis() > rendered) {
                return false;
            }
        }
        return true;
    }

    /**
     * Here when the guide rendered in target/docs is current (after {@code mvn prepare-package} or later, the docs
     * render after the unit tests); RenderedGuideIT runs the same check after every render of {@code mvn verify}.
     */
    @Test
    void everyLinkOfTheRenderedGuideResolves() throws IOException {
        assumeTrue(renderedAndCurrent(), "the guide rendered in target/docs from the current sources");
        assertThat(brokenRenderedLinks(RENDERED)).as("broken links in the rendered guide").isEmpty();
    }

    // ---- citations --------------------------------------------------------------------------------------------

    /**
     * A citation of the behaviour document the library was first written against, which is not in the repository and
     * which no reader has: its name in capitals as a word (before a rule's id or "section"). The character class keeps
     * this file from citing it.
     */
    static final Pattern OUTSIDE_CITATION = Pattern.compile("\\b[S]PEC\\b");

    /** The text files of the sources (main and test, Java and resources), the other modules' sources and the guide. */
    static List<Path> citingFiles() throws IOException {
        List<Path> files = new ArrayList<>(linkedFiles());
        for (String root : List.of("src", "it-tests/src", "example/src", "bench/src")) {
            if (!Files.isDirectory(Path.of(root))) {
                continue;
            }
            try (Stream<Path> walk = Files.walk(Path.of(root))) {
                walk.filter(Files::isRegularFile)
                        .filter(p -> p.toString().matches(".*\\.(java|properties|xml|sql|asadmin|md|adoc)")
                                || p.getParent().endsWith(Path.of("META-INF", "services")))
                        .sorted().forEach(files::add);
            }
        }
        return files;
    }

    @Test
    void nothingCitesADocumentOutsideTheRepository() throws IOException {
        List<String> citations = new ArrayList<>();
        for (Path file : citingFiles()) {
            String text = new String(Files.readAllBytes(file), java.nio.charset.StandardCharsets.ISO_8859_1);
            String[] lines = text.split("\n", -1);
            for (int i = 0; i < lines.length; i++) {
                if (OUTSIDE_CITATION.matcher(lines[i]).find()) {
                    citations.add(file + ":" + (i + 1) + ": " + lines[i].strip());
                }
            }
        }
        assertThat(citations)
                .as("citations of a document outside the repository: say what the rule means, or link the guide "
                        + "(docs/*.adoc) or CONTRIBUTING.md")
                .isEmpty();
    }

    // ---- the benchmarks page ------------------------------------------------------------------------------------

    static final Path BENCHMARKS = Path.of("BENCHMARKS.md");
    static final Path RESULTS = Path.of("bench", "results");
    /** A Markdown image: {@code ![alt](path)}. */
    static final Pattern MD_IMAGE = Pattern.compile("!\\[[^\\]]*]\\(([^)\\s]+)\\)");
    /** A path under bench/results/ named anywhere on the page (a link, a command, a code span). */
    static final Pattern RESULT_PATH = Pattern.compile("bench/results/[A-Za-z0-9_.\\-/]*");

    /** The page answers a reader's questions; the history of the runs is in bench/results/ and git log. */
    @Test
    void theBenchmarksPageIsShorterThan300Lines() {
        long lines = read(BENCHMARKS).lines().count();
        assertThat(lines).as("lines of BENCHMARKS.md: move earlier runs to bench/results/<date>/README.md").isLessThan(300);
    }

    @Test
    void everyImageTheBenchmarksPageEmbedsExists() {
        List<String> missing = new ArrayList<>();
        Matcher m = MD_IMAGE.matcher(read(BENCHMARKS));
        int images = 0;
        while (m.find()) {
            images++;
            if (!Files.isRegularFile(Path.of(m.group(1)))) {
                missing.add(m.group(1));
            }
        }
        assertThat(images).as("charts embedded in BENCHMARKS.md").isPositive();
        assertThat(missing).as("images BENCHMARKS.md embeds that do not exist (python3 bench/charts.py draws them)").isEmpty();
    }

    @Test
    void everyResultTheBenchmarksPageNamesExists() {
        List<String> missing = new ArrayList<>();
        Matcher m = RESULT_PATH.matcher(read(BENCHMARKS));
        while (m.find()) {
            String path = m.group().replaceAll("[.]+$", "");
            if (!Files.exists(Path.of(path))) {
                missing.add(path);
            }
        }
        assertThat(missing).as("files and folders under bench/results/ that BENCHMARKS.md names and that do not exist").isEmpty();
    }

    /** Results are filed by the day they ran and what ran (bench/results/2026-11-26/claims/), never by who ran them. */
    @Test
    void noResultsFolderIsNamedForASessionOrAnIssue() throws IOException {
        List<String> named;
        try (Stream<Path> walk = Files.walk(RESULTS)) {
            named = walk.filter(Files::isDirectory)
                    .filter(p -> p.getFileName().toString().toLowerCase(Locale.ROOT).matches("(session|issue).*"))
                    .map(Path::toString).sorted().toList();
        }
        assertThat(named).as("folders under bench/results/ named for a session or an issue: move them to <date>/<what ran>/").isEmpty();
    }

    /** The README's "Where it is tested" rows: build profile to version. */
    static Map<String, String> compatibilityRows() {
        String readme = read(Path.of("README.md"));
        int start = readme.indexOf("### Where it is tested");
        assertThat(start).as("README has its compatibility table").isPositive();
        Map<String, String> rows = new LinkedHashMap<>();
        for (String line : readme.substring(start).split("\n")) {
            if (line.startsWith("## ")) {
                break;
            }
            String[] cells = line.split("\\|");
            if (line.startsWith("| ") && cells.length > 6 && cells[5].strip().startsWith("`")) {
                rows.put(cells[5].strip().replace("`", ""), cells[2].strip());
            }
        }
        return rows;
    }

    /** A property of a POM, as its first definition gives it. */
    static String pomProperty(String pom, String name) {
        Matcher m = Pattern.compile("<" + Pattern.quote(name) + ">([^<$]+)</" + Pattern.quote(name) + ">").matcher(read(Path.of(pom)));
        assertThat(m.find()).as("%s defines %s", pom, name).isTrue();
        return m.group(1).strip();
    }

    @Test
    void theCompatibilityTableIsTheBuildsServers() {
        Map<String, String> rows = compatibilityRows();
        Set<String> profiles = new java.util.TreeSet<>();
        Matcher goals = Pattern.compile("(?m)^invoker\\.goals\\.\\d+ = verify -P([a-z0-9-]+)").matcher(read(Path.of("it-tests/invoker.properties")));
        while (goals.find()) {
            profiles.add(goals.group(1));
        }
        if (read(Path.of("pom.xml")).contains("<projectsDirectory>${project.basedir}/it-tests/quarkus</projectsDirectory>")) {
            profiles.add("it-tests/quarkus"); // the Quarkus application, a project of its own
        }
        if (read(Path.of("pom.xml")).contains("<projectsDirectory>${project.basedir}/it-tests/helidon</projectsDirectory>")) {
            profiles.add("it-tests/helidon"); // the Helidon MP application, a project of its own
        }
        assertThat(rows.keySet()).as("one row per server the build runs").containsExactlyInAnyOrderElementsOf(profiles);
        String it = "it-tests/pom.xml";
        Map<String, String> versions = new LinkedHashMap<>();
        versions.put("wildfly", pomProperty(it, "wildfly.version"));
        versions.put("wildfly-postgresql", pomProperty(it, "wildfly.version"));
        versions.put("payara", pomProperty(it, "payara-micro.version"));
        versions.put("cluster", pomProperty("example/pom.xml", "payara-micro.version")); // example/node runs the example's Payara
        versions.put("payara7", pomProperty(it, "payara7-micro.version"));
        versions.put("glassfish", pomProperty(it, "glassfish.version"));
        versions.put("liberty", pomProperty(it, "liberty.version"));
        versions.put("liberty-ee11", pomProperty(it, "liberty-ee11.version"));
        versions.put("it-tests/quarkus", pomProperty("it-tests/quarkus/pom.xml", "quarkus.version"));
        Matcher helidon = Pattern.compile("<artifactId>helidon-mp</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(read(Path.of("it-tests/helidon/pom.xml")));
        assertThat(helidon.find()).as("the Helidon application's parent is helidon-mp").isTrue();
        versions.put("it-tests/helidon", helidon.group(1).strip());
        assertThat(rows).as("the versions the build provisions").containsExactlyInAnyOrderEntriesOf(versions);
    }
}
