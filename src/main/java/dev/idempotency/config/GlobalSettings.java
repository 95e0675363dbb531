package dev.idempotency.config;

import dev.idempotency.ClaimMode;
import dev.idempotency.OnConcurrent;

import org.eclipse.microprofile.config.Config;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Function;

/**
 * The global keys under {@code idempotency.} (SPEC C1), read once at deployment. Every key and its default
 * is listed in the README's configuration table; an unknown key under {@code idempotency.} (other than
 * {@code idempotency.jpa.*}, passed to the JPA provider) fails the deployment, so that a typo is found at
 * once.
 */
public record GlobalSettings(
        Duration ttl,
        Duration lease,
        Duration leaseRenewalLimit,
        OnConcurrent onConcurrent,
        Duration waitTimeout,
        boolean required,
        boolean scopeByPrincipal,
        int maxKeyLength,
        String store,
        String persistenceUnit,
        String datasource,
        String schema,
        Duration lockTimeout,
        ClaimMode claim,
        Duration claimLockTimeout,
        Duration purgeInterval,
        int purgeBatchSize,
        int interceptorPriority,
        String nodeId,
        String header,
        StatusSet keepStatus,
        Set<String> replayHeaders,
        long maxResponseSize,
        boolean failOpen,
        String cacheMode,
        long cacheMaxEntries,
        String clusterName,
        String jgroupsStack,
        String bindAddress,
        int bindPort,
        String initialHosts,
        int healthMinMembers,
        Set<String> enabledRequestTypes,
        Set<String> disabledRequestTypes,
        String requestTypeDefault,
        String managerPolicy,
        Duration managerMaxAge,
        int managerMaxRecords,
        boolean managerScopeByPrincipal,
        Map<String, String> jpaProperties) {

    public static final String PREFIX = "idempotency.";
    public static final String JPA_PREFIX = PREFIX + "jpa.";

    /** The interceptor's default priority, {@code LIBRARY_BEFORE + 100}: inside {@code @Transactional} (200). */
    public static final int DEFAULT_INTERCEPTOR_PRIORITY = 1100;

    /** Every global key this version knows. */
    public static final Set<String> KEYS = Set.of(
            "idempotency.ttl",
            "idempotency.lease",
            "idempotency.lease-renewal-limit",
            "idempotency.on-concurrent",
            "idempotency.wait-timeout",
            "idempotency.required",
            "idempotency.scope-by-principal",
            "idempotency.max-key-length",
            "idempotency.store",
            "idempotency.persistence-unit",
            "idempotency.datasource",
            "idempotency.schema",
            "idempotency.lock-timeout",
            "idempotency.claim",
            "idempotency.claim-lock-timeout",
            "idempotency.purge.interval",
            "idempotency.purge.batch-size",
            "idempotency.interceptor.priority",
            "idempotency.node-id",
            "idempotency.header",
            "idempotency.keep-status",
            "idempotency.replay-headers",
            "idempotency.max-response-size",
            "idempotency.fail-open",
            "idempotency.cache.mode",
            "idempotency.cache.max-entries",
            "idempotency.cache.cluster-name",
            "idempotency.cache.jgroups-stack",
            "idempotency.cache.bind-address",
            "idempotency.cache.bind-port",
            "idempotency.cache.initial-hosts",
            "idempotency.health.min-members",
            "idempotency.request-types.enabled",
            "idempotency.request-types.disabled",
            "idempotency.request-types.default",
            "idempotency.manager.policy",
            "idempotency.manager.max-age",
            "idempotency.manager.max-records",
            "idempotency.manager.scope-by-principal");

    /** Response headers a replay carries (SPEC H10), before {@code idempotency.replay-headers}. */
    public static final Set<String> DEFAULT_REPLAY_HEADERS = Set.of("content-type", "content-location", "location",
            "etag", "last-modified", "link");

    /** Headers that are never replayed, whatever the configuration says: they are about the caller. */
    public static final Set<String> NEVER_REPLAYED = Set.of("set-cookie", "set-cookie2", "authorization",
            "proxy-authorization", "www-authenticate", "proxy-authenticate", "cookie", "idempotent-replayed");

    /** Reads and checks every global key; mistakes go to {@code errors} and the default is used instead. */
    public static GlobalSettings read(Config config, ConfigErrors errors) {
        Reader r = new Reader(config, errors);
        for (String name : typedNames(config)) {
            if (name.startsWith(PREFIX) && !name.startsWith(JPA_PREFIX) && !KEYS.contains(name)) {
                errors.add("Unknown configuration key " + name + "; the keys under idempotency. are: "
                        + String.join(", ", new java.util.TreeSet<>(KEYS)) + " and idempotency.jpa.*");
            }
        }
        Map<String, String> jpa = new TreeMap<>();
        for (String name : config.getPropertyNames()) {
            if (name.startsWith(JPA_PREFIX)) {
                config.getOptionalValue(name, String.class).ifPresent(v -> jpa.put(name.substring(JPA_PREFIX.length()), v));
            }
        }
        return new GlobalSettings(
                r.get("idempotency.ttl", "PT24H", v -> ConfigValues.duration("idempotency.ttl", v, false)),
                r.get("idempotency.lease", "PT1M", v -> ConfigValues.duration("idempotency.lease", v, false)),
                r.get("idempotency.lease-renewal-limit", "PT1H", v -> ConfigValues.duration("idempotency.lease-renewal-limit", v, true)),
                r.get("idempotency.on-concurrent", "reject",
                        v -> OnConcurrent.valueOf(ConfigValues.oneOf("idempotency.on-concurrent", v, "reject", "wait").toUpperCase())),
                r.get("idempotency.wait-timeout", "PT10S", v -> ConfigValues.duration("idempotency.wait-timeout", v, true)),
                r.get("idempotency.required", "true", v -> ConfigValues.bool("idempotency.required", v)),
                r.get("idempotency.scope-by-principal", "true", v -> ConfigValues.bool("idempotency.scope-by-principal", v)),
                r.get("idempotency.max-key-length", "255", v -> ConfigValues.integer("idempotency.max-key-length", v, 1, 255)),
                r.get("idempotency.store", "jpa", v -> ConfigValues.oneOf("idempotency.store", v, "jpa", "memory")),
                r.get("idempotency.persistence-unit", "", String::strip),
                r.get("idempotency.datasource", "java:comp/DefaultDataSource", String::strip),
                r.get("idempotency.schema", "create", v -> ConfigValues.oneOf("idempotency.schema", v, "create", "none")),
                r.get("idempotency.lock-timeout", "PT5S", v -> ConfigValues.duration("idempotency.lock-timeout", v, true)),
                r.get("idempotency.claim", "auto", v -> claimMode("idempotency.claim", v)),
                r.get("idempotency.claim-lock-timeout", "PT1S", v -> ConfigValues.duration("idempotency.claim-lock-timeout", v, true)),
                r.get("idempotency.purge.interval", "PT5M", v -> ConfigValues.duration("idempotency.purge.interval", v, false)),
                r.get("idempotency.purge.batch-size", "500", v -> ConfigValues.integer("idempotency.purge.batch-size", v, 1, 100_000)),
                r.get("idempotency.interceptor.priority", String.valueOf(DEFAULT_INTERCEPTOR_PRIORITY),
                        v -> ConfigValues.integer("idempotency.interceptor.priority", v, 0, Integer.MAX_VALUE)),
                r.get("idempotency.node-id", defaultNodeId(), v -> {
                    String s = v.strip();
                    if (s.isEmpty() || s.length() > 100) {
                        throw new IllegalArgumentException("idempotency.node-id=" + v + " must be 1 to 100 characters");
                    }
                    return s;
                }),
                r.get("idempotency.header", "Idempotency-Key", v -> ConfigValues.headerName("idempotency.header", v)),
                r.get("idempotency.keep-status", "2xx,3xx,4xx", v -> StatusSet.parse("idempotency.keep-status", v)),
                r.get("idempotency.replay-headers", "", GlobalSettings::replayHeaders),
                r.get("idempotency.max-response-size", "1048576", v -> (long) ConfigValues.integer("idempotency.max-response-size", v, 0, 16_777_216)),
                r.get("idempotency.fail-open", "false", v -> ConfigValues.bool("idempotency.fail-open", v)),
                r.get("idempotency.cache.mode", "local", v -> ConfigValues.oneOf("idempotency.cache.mode", v, "local", "cluster", "none")),
                r.get("idempotency.cache.max-entries", "100000",
                        v -> (long) ConfigValues.integer("idempotency.cache.max-entries", v, 1, Integer.MAX_VALUE)),
                r.get("idempotency.cache.cluster-name", "idempotency", String::strip),
                r.get("idempotency.cache.jgroups-stack", "", String::strip),
                r.get("idempotency.cache.bind-address", "127.0.0.1", String::strip),
                r.get("idempotency.cache.bind-port", "7800", v -> ConfigValues.integer("idempotency.cache.bind-port", v, 1, 65535)),
                r.get("idempotency.cache.initial-hosts", "127.0.0.1[7800]", v -> {
                    if (!v.strip().matches("[^\\[\\],\\s]+(\\[\\d{1,5}])?(\\s*,\\s*[^\\[\\],\\s]+(\\[\\d{1,5}])?)*")) {
                        throw new IllegalArgumentException("idempotency.cache.initial-hosts=" + v + " must be host[port],host[port]");
                    }
                    return v.strip();
                }),
                r.get("idempotency.health.min-members", "1", v -> ConfigValues.integer("idempotency.health.min-members", v, 1, 1000)),
                r.get("idempotency.request-types.enabled", "", GlobalSettings::names),
                r.get("idempotency.request-types.disabled", "", GlobalSettings::names),
                r.get("idempotency.request-types.default", "enabled",
                        v -> ConfigValues.oneOf("idempotency.request-types.default", v, "enabled", "disabled", "error")),
                r.get("idempotency.manager.policy", "none", v -> ConfigValues.oneOf("idempotency.manager.policy", v, "none", "age", "size")),
                r.get("idempotency.manager.max-age", "PT24H", v -> ConfigValues.duration("idempotency.manager.max-age", v, false)),
                r.get("idempotency.manager.max-records", "100000",
                        v -> ConfigValues.integer("idempotency.manager.max-records", v, 0, Integer.MAX_VALUE)),
                r.get("idempotency.manager.scope-by-principal", "true", v -> ConfigValues.bool("idempotency.manager.scope-by-principal", v)),
                Map.copyOf(jpa));
    }

    /** {@code auto} (the default: {@link ClaimMode#DEFAULT}), {@code atomic} or {@code leased}. */
    public static ClaimMode claimMode(String key, String value) {
        String v = ConfigValues.oneOf(key, value, "auto", "atomic", "leased");
        return v.equals("auto") ? ClaimMode.DEFAULT : ClaimMode.valueOf(v.toUpperCase(java.util.Locale.ROOT));
    }

    private static Set<String> names(String value) {
        java.util.Set<String> out = new java.util.TreeSet<>();
        for (String n : value.split(",")) {
            if (!n.isBlank()) {
                out.add(n.strip());
            }
        }
        return java.util.Collections.unmodifiableSet(out);
    }

    /**
     * Whether idempotency is on for a request type (SPEC M6): listed enabled, listed disabled, else the
     * default; {@code null} (no type) is always enabled.
     *
     * @throws dev.idempotency.IdempotencyRequestTypeException for an unlisted type when the default is error
     */
    public boolean requestTypeEnabled(String type) {
        if (type == null || enabledRequestTypes.contains(type)) {
            return true;
        }
        if (disabledRequestTypes.contains(type)) {
            return false;
        }
        return switch (requestTypeDefault) {
            case "enabled" -> true;
            case "disabled" -> false;
            default -> throw new dev.idempotency.IdempotencyRequestTypeException("The request type '" + type
                    + "' is listed in neither idempotency.request-types.enabled nor .disabled, and the default is error");
        };
    }

    private static Set<String> replayHeaders(String value) {
        java.util.Set<String> out = new java.util.TreeSet<>(DEFAULT_REPLAY_HEADERS);
        for (String h : value.split(",")) {
            String name = h.strip().toLowerCase(java.util.Locale.ROOT);
            if (name.isEmpty()) {
                continue;
            }
            if (NEVER_REPLAYED.contains(name)) {
                throw new IllegalArgumentException("idempotency.replay-headers names " + h.strip()
                        + ", which is about the caller and is never replayed");
            }
            out.add(name);
        }
        return java.util.Collections.unmodifiableSet(out);
    }

    /**
     * The property names a person typed: those of every configuration source but the environment's.
     * Environment variables are matched against keys ({@code IDEMPOTENCY_TTL}) but are not checked for
     * typos: a process inherits many that are not meant for this library.
     */
    public static java.util.Set<String> typedNames(Config config) {
        java.util.Set<String> names = new java.util.TreeSet<>();
        for (org.eclipse.microprofile.config.spi.ConfigSource source : config.getConfigSources()) {
            String sourceName = source.getName() == null ? "" : source.getName().toLowerCase(java.util.Locale.ROOT);
            if (sourceName.contains("env")) {
                continue;
            }
            names.addAll(source.getPropertyNames());
        }
        return names;
    }

    /** {@code host-pid-random}: unique per process, readable in the {@code owner} column. */
    static String defaultNodeId() {
        String runtime = ManagementFactory.getRuntimeMXBean().getName(); // pid@host
        String id = runtime.contains("@")
                ? runtime.substring(runtime.indexOf('@') + 1) + "-" + runtime.substring(0, runtime.indexOf('@'))
                : runtime;
        id = id + "-" + UUID.randomUUID().toString().substring(0, 8);
        return id.length() > 100 ? id.substring(id.length() - 100) : id;
    }

    private record Reader(Config config, ConfigErrors errors) {
        <T> T get(String key, String defaultValue, Function<String, T> parse) {
            String raw = config.getOptionalValue(key, String.class).orElse(defaultValue);
            try {
                return parse.apply(raw);
            } catch (IllegalArgumentException e) {
                errors.add(e.getMessage());
                return parse.apply(defaultValue);
            }
        }
    }
}
