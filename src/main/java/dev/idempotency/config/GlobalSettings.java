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
 * The global keys under {@code idempotency.}, read once at deployment. Every key and its default
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
        Duration connectionTimeout,
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
        long maxRequestSize,
        boolean failOpen,
        AnonymousPolicy anonymous,
        String expiryHeader,
        String wwwAuthenticate,
        boolean hashKeysAtRest,
        String cacheMode,
        long cacheMaxEntries,
        Duration cacheLocalMaxAge,
        String cacheClustering,
        int cacheOwners,
        String clusterName,
        String jgroupsStack,
        String bindAddress,
        int bindPort,
        String initialHosts,
        CacheSecret cacheSecret,
        boolean allowInsecureTransport,
        Duration cacheClusterTimeout,
        Duration cacheClusterRetryInterval,
        Duration cacheFailureDetection,
        RemoteCacheSettings remoteCache,
        int healthMinMembers,
        Set<String> enabledRequestTypes,
        Set<String> disabledRequestTypes,
        String requestTypeDefault,
        String managerPolicy,
        Duration managerMaxAge,
        int managerMaxRecords,
        boolean managerScopeByPrincipal,
        boolean openApiEnabled,
        String openApiFilter,
        Map<String, String> jpaProperties) {

    public static final String PREFIX = "idempotency.";
    public static final String JPA_PREFIX = PREFIX + "jpa.";

    /** The interceptor's default priority, {@code LIBRARY_BEFORE + 100}: inside {@code @Transactional} (200). */
    public static final int DEFAULT_INTERCEPTOR_PRIORITY = 1100;

    /** The largest {@code max-request-size}: a body is held in one array while its request is claimed. */
    public static final int MAX_REQUEST_SIZE_LIMIT = Integer.MAX_VALUE - 8;

    /** Every global key this version knows: the names of {@link ConfigKey}. */
    public static final Set<String> KEYS = ConfigKey.names();

    /** Response headers a replay carries (an allow-list: never Set-Cookie or the caller's credentials), before {@code idempotency.replay-headers}. */
    public static final Set<String> DEFAULT_REPLAY_HEADERS = Set.of("content-type", "content-location", "location",
            "etag", "last-modified", "link");

    /** Headers that are never replayed, whatever the configuration says: they are about the caller. */
    public static final Set<String> NEVER_REPLAYED = Set.of("set-cookie", "set-cookie2", "authorization",
            "proxy-authorization", "www-authenticate", "proxy-authenticate", "cookie", "idempotent-replayed");

    /**
     * A door's key as the engine, the store and the cache are to see it: itself, or with
     * {@code idempotency.store-keys=hashed} its {@link dev.idempotency.spi.ScopedKey#hashed() digest}, so that no client
     * key or principal is kept at rest. Every door builds its keys through this.
     */
    public dev.idempotency.spi.ScopedKey atRest(dev.idempotency.spi.ScopedKey key) {
        return hashKeysAtRest ? key.hashed() : key;
    }

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
        GlobalSettings settings = new GlobalSettings(
                r.get(ConfigKey.TTL, v -> ConfigValues.duration(ConfigKey.TTL.key(), v, false)),
                r.get(ConfigKey.LEASE, v -> ConfigValues.duration(ConfigKey.LEASE.key(), v, false)),
                r.get(ConfigKey.LEASE_RENEWAL_LIMIT, v -> ConfigValues.duration(ConfigKey.LEASE_RENEWAL_LIMIT.key(), v, true)),
                r.get(ConfigKey.ON_CONCURRENT,
                        v -> OnConcurrent.valueOf(ConfigValues.oneOf(ConfigKey.ON_CONCURRENT.key(), v, "reject", "wait").toUpperCase())),
                r.get(ConfigKey.WAIT_TIMEOUT, v -> ConfigValues.duration(ConfigKey.WAIT_TIMEOUT.key(), v, true)),
                r.get(ConfigKey.REQUIRED, v -> ConfigValues.bool(ConfigKey.REQUIRED.key(), v)),
                r.get(ConfigKey.SCOPE_BY_PRINCIPAL, v -> ConfigValues.bool(ConfigKey.SCOPE_BY_PRINCIPAL.key(), v)),
                r.get(ConfigKey.MAX_KEY_LENGTH, v -> ConfigValues.integer(ConfigKey.MAX_KEY_LENGTH.key(), v, 1, 255)),
                r.get(ConfigKey.STORE, v -> ConfigValues.oneOf(ConfigKey.STORE.key(), v, "jpa", "memory")),
                r.get(ConfigKey.PERSISTENCE_UNIT, v -> ConfigValues.text(ConfigKey.PERSISTENCE_UNIT.key(), v, ConfigValues.MAX_NAME, false)),
                r.get(ConfigKey.DATASOURCE, v -> ConfigValues.text(ConfigKey.DATASOURCE.key(), v, ConfigValues.MAX_NAME, true)),
                // update: the name Hibernate users reach for; the library's create creates and migrates, so it is the same
                r.get(ConfigKey.SCHEMA, v -> ConfigValues.oneOf(ConfigKey.SCHEMA.key(), v, "create", "update", "validate", "none")
                        .replace("update", "create")),
                r.get(ConfigKey.LOCK_TIMEOUT, v -> ConfigValues.duration(ConfigKey.LOCK_TIMEOUT.key(), v, true)),
                r.get(ConfigKey.CONNECTION_TIMEOUT, v -> ConfigValues.duration(ConfigKey.CONNECTION_TIMEOUT.key(), v, false)),
                r.get(ConfigKey.CLAIM, v -> claimMode(ConfigKey.CLAIM.key(), v)),
                r.get(ConfigKey.CLAIM_LOCK_TIMEOUT, v -> ConfigValues.duration(ConfigKey.CLAIM_LOCK_TIMEOUT.key(), v, true)),
                r.get(ConfigKey.PURGE_INTERVAL, v -> ConfigValues.duration(ConfigKey.PURGE_INTERVAL.key(), v, false)),
                r.get(ConfigKey.PURGE_BATCH_SIZE, v -> ConfigValues.integer(ConfigKey.PURGE_BATCH_SIZE.key(), v, 1, 100_000)),
                r.get(ConfigKey.INTERCEPTOR_PRIORITY,
                        v -> ConfigValues.integer(ConfigKey.INTERCEPTOR_PRIORITY.key(), v, 0, Integer.MAX_VALUE)),
                r.get(ConfigKey.NODE_ID, defaultNodeId(), v -> {
                    String s = ConfigValues.text(ConfigKey.NODE_ID.key(), v, 100, true);
                    if (s.isEmpty()) {
                        throw new IllegalArgumentException(ConfigKey.NODE_ID.key() + " must be 1 to 100 characters");
                    }
                    return s;
                }),
                r.get(ConfigKey.HEADER, v -> ConfigValues.headerName(ConfigKey.HEADER.key(), v)),
                r.get(ConfigKey.KEEP_STATUS, v -> StatusSet.parse(ConfigKey.KEEP_STATUS.key(), v)),
                r.get(ConfigKey.REPLAY_HEADERS, GlobalSettings::replayHeaders),
                r.get(ConfigKey.MAX_RESPONSE_SIZE, v -> (long) ConfigValues.integer(ConfigKey.MAX_RESPONSE_SIZE.key(), v, 0, 16_777_216)),
                r.get(ConfigKey.MAX_REQUEST_SIZE, 
                        v -> (long) ConfigValues.integer(ConfigKey.MAX_REQUEST_SIZE.key(), v, 1, MAX_REQUEST_SIZE_LIMIT)),
                r.get(ConfigKey.FAIL_OPEN, v -> ConfigValues.bool(ConfigKey.FAIL_OPEN.key(), v)),
                r.get(ConfigKey.ANONYMOUS, v -> AnonymousPolicy.parse(ConfigKey.ANONYMOUS.key(), v)),
                r.get(ConfigKey.EXPIRY_HEADER, v -> v.isBlank() ? "" : ConfigValues.headerName(ConfigKey.EXPIRY_HEADER.key(), v)),
                r.get(ConfigKey.WWW_AUTHENTICATE, v -> ConfigValues.text(ConfigKey.WWW_AUTHENTICATE.key(), v, 1000, true)),
                r.get(ConfigKey.STORE_KEYS, v -> ConfigValues.oneOf(ConfigKey.STORE_KEYS.key(), v, "plain", "hashed").equals("hashed")),
                r.get(ConfigKey.CACHE_MODE, v -> ConfigValues.oneOf(ConfigKey.CACHE_MODE.key(), v, "local", "cluster", "remote", "none")),
                r.get(ConfigKey.CACHE_MAX_ENTRIES,
                        v -> (long) ConfigValues.integer(ConfigKey.CACHE_MAX_ENTRIES.key(), v, 1, Integer.MAX_VALUE)),
                r.get(ConfigKey.CACHE_LOCAL_MAX_AGE, v -> ConfigValues.duration(ConfigKey.CACHE_LOCAL_MAX_AGE.key(), v, false)),
                r.get(ConfigKey.CACHE_CLUSTERING, v -> ConfigValues.oneOf(ConfigKey.CACHE_CLUSTERING.key(), v, "replicated", "distributed")),
                r.get(ConfigKey.CACHE_OWNERS, v -> ConfigValues.integer(ConfigKey.CACHE_OWNERS.key(), v, 1, 32)),
                r.get(ConfigKey.CACHE_CLUSTER_NAME, v -> ConfigValues.text(ConfigKey.CACHE_CLUSTER_NAME.key(), v, ConfigValues.MAX_NAME, true)),
                r.get(ConfigKey.CACHE_JGROUPS_STACK, v -> ConfigValues.text(ConfigKey.CACHE_JGROUPS_STACK.key(), v, ConfigValues.MAX_PATH, false)),
                r.get(ConfigKey.CACHE_BIND_ADDRESS, v -> ConfigValues.text(ConfigKey.CACHE_BIND_ADDRESS.key(), v, ConfigValues.MAX_NAME, true)),
                r.get(ConfigKey.CACHE_BIND_PORT, v -> ConfigValues.integer(ConfigKey.CACHE_BIND_PORT.key(), v, 1, 65535)),
                r.get(ConfigKey.CACHE_INITIAL_HOSTS, v -> {
                    if (!v.strip().matches("[^\\[\\],\\s]+(\\[\\d{1,5}])?(\\s*,\\s*[^\\[\\],\\s]+(\\[\\d{1,5}])?)*")) {
                        throw new IllegalArgumentException(ConfigKey.CACHE_INITIAL_HOSTS.key() + "=" + ConfigValues.shown(v) + " must be host[port],host[port]");
                    }
                    return ConfigValues.text(ConfigKey.CACHE_INITIAL_HOSTS.key(), v, 4096, true);
                }),
                cacheSecret(config, errors),
                r.get(ConfigKey.CACHE_ALLOW_INSECURE_TRANSPORT, v -> ConfigValues.bool(ConfigKey.CACHE_ALLOW_INSECURE_TRANSPORT.key(), v)),
                r.get(ConfigKey.CACHE_CLUSTER_TIMEOUT, v -> ConfigValues.duration(ConfigKey.CACHE_CLUSTER_TIMEOUT.key(), v, false)),
                r.get(ConfigKey.CACHE_CLUSTER_RETRY_INTERVAL, v -> ConfigValues.duration(ConfigKey.CACHE_CLUSTER_RETRY_INTERVAL.key(), v, false)),
                r.get(ConfigKey.CACHE_FAILURE_DETECTION, v -> ConfigValues.duration(ConfigKey.CACHE_FAILURE_DETECTION.key(), v, false)),
                remoteCache(r),
                r.get(ConfigKey.HEALTH_MIN_MEMBERS, v -> ConfigValues.integer(ConfigKey.HEALTH_MIN_MEMBERS.key(), v, 1, 1000)),
                r.get(ConfigKey.REQUEST_TYPES_ENABLED, v -> names(ConfigKey.REQUEST_TYPES_ENABLED.key(), v)),
                r.get(ConfigKey.REQUEST_TYPES_DISABLED, v -> names(ConfigKey.REQUEST_TYPES_DISABLED.key(), v)),
                r.get(ConfigKey.REQUEST_TYPES_DEFAULT,
                        v -> ConfigValues.oneOf(ConfigKey.REQUEST_TYPES_DEFAULT.key(), v, "enabled", "disabled", "error")),
                r.get(ConfigKey.MANAGER_POLICY, v -> ConfigValues.oneOf(ConfigKey.MANAGER_POLICY.key(), v, "none", "age", "size")),
                r.get(ConfigKey.MANAGER_MAX_AGE, v -> ConfigValues.duration(ConfigKey.MANAGER_MAX_AGE.key(), v, false)),
                r.get(ConfigKey.MANAGER_MAX_RECORDS,
                        v -> ConfigValues.integer(ConfigKey.MANAGER_MAX_RECORDS.key(), v, 0, Integer.MAX_VALUE)),
                r.get(ConfigKey.MANAGER_SCOPE_BY_PRINCIPAL, v -> ConfigValues.bool(ConfigKey.MANAGER_SCOPE_BY_PRINCIPAL.key(), v)),
                r.get(ConfigKey.OPENAPI_ENABLED, v -> ConfigValues.bool(ConfigKey.OPENAPI_ENABLED.key(), v)),
                r.get(ConfigKey.OPENAPI_FILTER, v -> ConfigValues.className(ConfigKey.OPENAPI_FILTER.key(), v)),
                Map.copyOf(jpa));
        checkTransportSecurity(settings, errors);
        return settings;
    }

    /** The keys under {@code idempotency.cache.remote.}. */
    private static RemoteCacheSettings remoteCache(Reader r) {
        RemoteCacheSettings remote = new RemoteCacheSettings(
                r.get(ConfigKey.CACHE_REMOTE_SERVERS, v -> RemoteCacheSettings.servers(ConfigKey.CACHE_REMOTE_SERVERS.key(), v)),
                r.get(ConfigKey.CACHE_REMOTE_CACHE, v -> ConfigValues.text(ConfigKey.CACHE_REMOTE_CACHE.key(), v, ConfigValues.MAX_NAME, true)),
                r.get(ConfigKey.CACHE_REMOTE_CREATE, v -> ConfigValues.bool(ConfigKey.CACHE_REMOTE_CREATE.key(), v)),
                r.get(ConfigKey.CACHE_REMOTE_USERNAME, v -> ConfigValues.text(ConfigKey.CACHE_REMOTE_USERNAME.key(), v, ConfigValues.MAX_NAME, false)),
                r.get(ConfigKey.CACHE_REMOTE_PASSWORD, v -> ConfigValues.secret(ConfigKey.CACHE_REMOTE_PASSWORD.key(), v)),
                r.get(ConfigKey.CACHE_REMOTE_REALM, v -> ConfigValues.text(ConfigKey.CACHE_REMOTE_REALM.key(), v, ConfigValues.MAX_NAME, true)),
                r.get(ConfigKey.CACHE_REMOTE_SASL_MECHANISM,
                        v -> ConfigValues.text(ConfigKey.CACHE_REMOTE_SASL_MECHANISM.key(), v, 64, true).toUpperCase(java.util.Locale.ROOT)),
                r.get(ConfigKey.CACHE_REMOTE_TLS, v -> ConfigValues.bool(ConfigKey.CACHE_REMOTE_TLS.key(), v)),
                r.get(ConfigKey.CACHE_REMOTE_TRUST_STORE, v -> ConfigValues.text(ConfigKey.CACHE_REMOTE_TRUST_STORE.key(), v, ConfigValues.MAX_PATH, false)),
                r.get(ConfigKey.CACHE_REMOTE_TRUST_STORE_PASSWORD, v -> ConfigValues.secret(ConfigKey.CACHE_REMOTE_TRUST_STORE_PASSWORD.key(), v)),
                r.get(ConfigKey.CACHE_REMOTE_SNI_HOST, v -> ConfigValues.text(ConfigKey.CACHE_REMOTE_SNI_HOST.key(), v, ConfigValues.MAX_NAME, false)),
                r.get(ConfigKey.CACHE_REMOTE_PROPERTIES, v -> ConfigValues.text(ConfigKey.CACHE_REMOTE_PROPERTIES.key(), v, ConfigValues.MAX_PATH, false)),
                r.get(ConfigKey.CACHE_REMOTE_NEAR_CACHE, v -> ConfigValues.integer(ConfigKey.CACHE_REMOTE_NEAR_CACHE.key(), v, 0, Integer.MAX_VALUE)),
                r.get(ConfigKey.CACHE_REMOTE_TIMEOUT, v -> ConfigValues.duration(ConfigKey.CACHE_REMOTE_TIMEOUT.key(), v, false)),
                r.get(ConfigKey.CACHE_REMOTE_RETRY_INTERVAL, v -> ConfigValues.duration(ConfigKey.CACHE_REMOTE_RETRY_INTERVAL.key(), v, false)),
                r.get(ConfigKey.CACHE_REMOTE_WAIT_POLL, v -> ConfigValues.duration(ConfigKey.CACHE_REMOTE_WAIT_POLL.key(), v, false)));
        if (!remote.trustStore().isEmpty() && !new java.io.File(remote.trustStore()).isFile()) {
            r.errors().add(ConfigKey.CACHE_REMOTE_TRUST_STORE.key() + "=" + remote.trustStore() + " is not a file");
        }
        if (!remote.username().isEmpty() && remote.password().isEmpty()) {
            r.errors().add(ConfigKey.CACHE_REMOTE_USERNAME.key() + " is set without " + ConfigKey.CACHE_REMOTE_PASSWORD.key());
        }
        return remote;
    }

    /** The cache's secret: {@code idempotency.cache.secret} or a key store's secret key entry; {@code null}: none. */
    private static CacheSecret cacheSecret(Config config, ConfigErrors errors) {
        String text = config.getOptionalValue(ConfigKey.CACHE_SECRET.key(), String.class).orElse("");
        try {
            String keystore = ConfigValues.text(ConfigKey.CACHE_KEYSTORE.key(),
                    config.getOptionalValue(ConfigKey.CACHE_KEYSTORE.key(), String.class).orElse(""), ConfigValues.MAX_PATH, false);
            String password = ConfigValues.secret(ConfigKey.CACHE_KEYSTORE_PASSWORD.key(),
                    config.getOptionalValue(ConfigKey.CACHE_KEYSTORE_PASSWORD.key(), String.class).orElse(""));
            String alias = ConfigValues.text(ConfigKey.CACHE_KEYSTORE_ALIAS.key(), config.getOptionalValue(ConfigKey.CACHE_KEYSTORE_ALIAS.key(),
                    String.class).orElse(ConfigKey.CACHE_KEYSTORE_ALIAS.defaultValue()), ConfigValues.MAX_NAME, true);
            if (!text.isBlank() && !keystore.isEmpty()) {
                throw new IllegalArgumentException("Both " + ConfigKey.CACHE_SECRET.key() + " and " + ConfigKey.CACHE_KEYSTORE.key()
                        + " are set: set one");
            }
            if (!text.isBlank()) {
                return CacheSecret.ofText(ConfigKey.CACHE_SECRET.key(), ConfigValues.secret(ConfigKey.CACHE_SECRET.key(), text));
            }
            if (!keystore.isEmpty()) {
                return CacheSecret.ofKeyStore(keystore, password, alias);
            }
        } catch (IllegalArgumentException e) {
            errors.add(e.getMessage());
        }
        return null;
    }

    /**
     * The library's own cluster leaves loopback only authenticated and encrypted (a secret or a key store), unless
     * {@code idempotency.cache.allow-insecure-transport=true} says the network is secured otherwise. A JGroups XML
     * stack of the user's is checked when its channel is built (CacheManagers).
     */
    private static void checkTransportSecurity(GlobalSettings s, ConfigErrors errors) {
        if (!s.cacheMode().equals("cluster") || !s.jgroupsStack().isEmpty() || s.cacheSecret() != null
                || s.allowInsecureTransport()) {
            return;
        }
        boolean loopback;
        try {
            loopback = java.net.InetAddress.getByName(s.bindAddress()).isLoopbackAddress();
        } catch (java.net.UnknownHostException e) {
            errors.add(ConfigKey.CACHE_BIND_ADDRESS.key() + "=" + s.bindAddress() + " is not an address of this host: " + e.getMessage());
            return;
        }
        if (!loopback) {
            errors.add(insecureTransportMessage(ConfigKey.CACHE_BIND_ADDRESS.key() + "=" + s.bindAddress()));
        }
    }

    /** Why a cluster off loopback without a secret fails the deployment, and the keys that fix it. */
    public static String insecureTransportMessage(String what) {
        return "The clustered cache would leave loopback (" + what + ") unauthenticated and unencrypted: anyone who reaches "
                + "its port could join the cluster, read stored responses and plant forged ones. Set "
                + ConfigKey.CACHE_SECRET.key() + " (a shared secret of at least " + CacheSecret.MIN_TEXT_LENGTH
                + " characters, the same on every node) or " + ConfigKey.CACHE_KEYSTORE.key() + " with "
                + ConfigKey.CACHE_KEYSTORE_PASSWORD.key() + " and " + ConfigKey.CACHE_KEYSTORE_ALIAS.key()
                + " (a secret key entry); or, on a network secured otherwise, "
                + ConfigKey.CACHE_ALLOW_INSECURE_TRANSPORT.key() + "=true";
    }

    /** {@code auto} (the default: {@link ClaimMode#DEFAULT}), {@code atomic}, {@code leased} or {@code optimistic}. */
    public static ClaimMode claimMode(String key, String value) {
        String v = ConfigValues.oneOf(key, value, "auto", "atomic", "leased", "optimistic");
        return v.equals("auto") ? ClaimMode.DEFAULT : ClaimMode.valueOf(v.toUpperCase(java.util.Locale.ROOT));
    }

    private static Set<String> names(String key, String value) {
        java.util.Set<String> out = new java.util.TreeSet<>();
        for (String n : value.split(",")) {
            if (!n.isBlank()) {
                out.add(ConfigValues.text(key, n, ConfigValues.MAX_NAME, true));
            }
        }
        return java.util.Collections.unmodifiableSet(out);
    }

    /**
     * Whether idempotency is on for a request type: listed enabled, listed disabled, else the
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
            if (h.isBlank()) {
                continue;
            }
            String name = ConfigValues.headerName(ConfigKey.REPLAY_HEADERS.key(), h).toLowerCase(java.util.Locale.ROOT);
            if (NEVER_REPLAYED.contains(name)) {
                throw new IllegalArgumentException(ConfigKey.REPLAY_HEADERS.key() + " names " + h.strip()
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
        <T> T get(ConfigKey key, Function<String, T> parse) {
            return get(key, key.defaultValue(), parse);
        }

        /** With a default computed at deployment (the table says how, for the README). */
        <T> T get(ConfigKey key, String defaultValue, Function<String, T> parse) {
            String raw = config.getOptionalValue(key.key(), String.class).orElse(defaultValue);
            try {
                return parse.apply(raw);
            } catch (IllegalArgumentException e) {
                errors.add(e.getMessage());
                return parse.apply(defaultValue);
            }
        }
    }
}
