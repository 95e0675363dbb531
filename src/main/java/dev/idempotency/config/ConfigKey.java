package dev.idempotency.config;

import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Every global configuration key and its default: the one table from which {@link GlobalSettings} reads, the
 * unknown-key check ({@link GlobalSettings#KEYS}) and the README's configuration table (ReadmeTest) derive. Under
 * {@code idempotency.jpa.*} any key is passed to the JPA provider.
 */
public enum ConfigKey {
    TTL("idempotency.ttl", "PT24H"),
    LEASE("idempotency.lease", "PT1M"),
    LEASE_RENEWAL_LIMIT("idempotency.lease-renewal-limit", "PT1H"),
    ON_CONCURRENT("idempotency.on-concurrent", "reject"),
    WAIT_TIMEOUT("idempotency.wait-timeout", "PT10S"),
    REQUIRED("idempotency.required", "true"),
    SCOPE_BY_PRINCIPAL("idempotency.scope-by-principal", "true"),
    MAX_KEY_LENGTH("idempotency.max-key-length", "255"),
    STORE("idempotency.store", "jpa"),
    PERSISTENCE_UNIT("idempotency.persistence-unit", ""),
    DATASOURCE("idempotency.datasource", "java:comp/DefaultDataSource"),
    SCHEMA("idempotency.schema", "create"),
    LOCK_TIMEOUT("idempotency.lock-timeout", "PT5S"),
    CONNECTION_TIMEOUT("idempotency.connection-timeout", "PT10S"),
    CLAIM("idempotency.claim", "auto"),
    CLAIM_LOCK_TIMEOUT("idempotency.claim-lock-timeout", "PT1S"),
    PURGE_INTERVAL("idempotency.purge.interval", "PT5M"),
    PURGE_BATCH_SIZE("idempotency.purge.batch-size", "500"),
    INTERCEPTOR_PRIORITY("idempotency.interceptor.priority", String.valueOf(GlobalSettings.DEFAULT_INTERCEPTOR_PRIORITY)),
    NODE_ID("idempotency.node-id", null, "<host>-<pid>-<random>"),
    HEADER("idempotency.header", "Idempotency-Key"),
    KEEP_STATUS("idempotency.keep-status", "2xx,3xx,4xx,!408,!409,!423,!425,!429"),
    REPLAY_HEADERS("idempotency.replay-headers", ""),
    MAX_RESPONSE_SIZE("idempotency.max-response-size", "1048576"),
    MAX_REQUEST_SIZE("idempotency.max-request-size", "1048576"),
    FAIL_OPEN("idempotency.fail-open", "false"),
    ANONYMOUS("idempotency.anonymous", "allow"),
    EXPIRY_HEADER("idempotency.expiry-header", ""),
    WWW_AUTHENTICATE("idempotency.www-authenticate", "Bearer"),
    STORE_KEYS("idempotency.store-keys", "plain"),
    CACHE_MODE("idempotency.cache.mode", "local"),
    CACHE_MAX_ENTRIES("idempotency.cache.max-entries", "100000"),
    CACHE_LOCAL_MAX_AGE("idempotency.cache.local-max-age", "PT1M"),
    CACHE_CLUSTERING("idempotency.cache.clustering", "replicated"),
    CACHE_OWNERS("idempotency.cache.owners", "2"),
    CACHE_CLUSTER_NAME("idempotency.cache.cluster-name", "idempotency"),
    CACHE_JGROUPS_STACK("idempotency.cache.jgroups-stack", ""),
    CACHE_BIND_ADDRESS("idempotency.cache.bind-address", "127.0.0.1"),
    CACHE_BIND_PORT("idempotency.cache.bind-port", "7800"),
    CACHE_INITIAL_HOSTS("idempotency.cache.initial-hosts", "127.0.0.1[7800]"),
    CACHE_SECRET("idempotency.cache.secret", ""),
    CACHE_KEYSTORE("idempotency.cache.keystore", ""),
    CACHE_KEYSTORE_PASSWORD("idempotency.cache.keystore-password", ""),
    CACHE_KEYSTORE_ALIAS("idempotency.cache.keystore-alias", "idempotency"),
    CACHE_ALLOW_INSECURE_TRANSPORT("idempotency.cache.allow-insecure-transport", "false"),
    CACHE_CLUSTER_TIMEOUT("idempotency.cache.cluster-timeout", "PT1S"),
    CACHE_CLUSTER_RETRY_INTERVAL("idempotency.cache.cluster-retry-interval", "PT5S"),
    CACHE_FAILURE_DETECTION("idempotency.cache.failure-detection", "PT6S"),
    CACHE_REMOTE_SERVERS("idempotency.cache.remote.servers", "", "127.0.0.1:11222"),
    CACHE_REMOTE_CACHE("idempotency.cache.remote.cache", "idempotency-records"),
    CACHE_REMOTE_CREATE("idempotency.cache.remote.create", "true"),
    CACHE_REMOTE_USERNAME("idempotency.cache.remote.username", ""),
    CACHE_REMOTE_PASSWORD("idempotency.cache.remote.password", ""),
    CACHE_REMOTE_REALM("idempotency.cache.remote.realm", "default"),
    CACHE_REMOTE_SASL_MECHANISM("idempotency.cache.remote.sasl-mechanism", "SCRAM-SHA-512"),
    CACHE_REMOTE_TLS("idempotency.cache.remote.tls", "false"),
    CACHE_REMOTE_TRUST_STORE("idempotency.cache.remote.trust-store", ""),
    CACHE_REMOTE_TRUST_STORE_PASSWORD("idempotency.cache.remote.trust-store-password", ""),
    CACHE_REMOTE_SNI_HOST("idempotency.cache.remote.sni-host", ""),
    CACHE_REMOTE_PROPERTIES("idempotency.cache.remote.properties", ""),
    CACHE_REMOTE_NEAR_CACHE("idempotency.cache.remote.near-cache", "0"),
    CACHE_REMOTE_TIMEOUT("idempotency.cache.remote.timeout", "PT2S"),
    CACHE_REMOTE_RETRY_INTERVAL("idempotency.cache.remote.retry-interval", "PT5S"),
    CACHE_REMOTE_WAIT_POLL("idempotency.cache.remote.wait-poll", "PT5S"),
    HEALTH_MIN_MEMBERS("idempotency.health.min-members", "1"),
    REQUEST_TYPES_ENABLED("idempotency.request-types.enabled", ""),
    REQUEST_TYPES_DISABLED("idempotency.request-types.disabled", ""),
    REQUEST_TYPES_DEFAULT("idempotency.request-types.default", "enabled"),
    MANAGER_POLICY("idempotency.manager.policy", "none"),
    MANAGER_MAX_AGE("idempotency.manager.max-age", "PT24H"),
    MANAGER_MAX_RECORDS("idempotency.manager.max-records", "100000"),
    MANAGER_SCOPE_BY_PRINCIPAL("idempotency.manager.scope-by-principal", "true"),
    OPENAPI_ENABLED("idempotency.openapi.enabled", "true"),
    OPENAPI_FILTER("idempotency.openapi.filter", "");

    private final String key;
    private final String defaultValue;
    private final String documentedDefault;

    ConfigKey(String key, String defaultValue) {
        this(key, defaultValue, defaultValue);
    }

    /** @param defaultValue {@code null}: computed at deployment, as {@code documentedDefault} says */
    ConfigKey(String key, String defaultValue, String documentedDefault) {
        this.key = key;
        this.defaultValue = defaultValue;
        this.documentedDefault = documentedDefault;
    }

    /** The key's full name, {@code idempotency.…}. */
    public String key() {
        return key;
    }

    /** The default's text as the reader parses it; {@code null} when computed at deployment; empty: none. */
    public String defaultValue() {
        return defaultValue;
    }

    /** The default as the README states it (empty: none). */
    public String documentedDefault() {
        return documentedDefault;
    }

    static Set<String> names() {
        return Arrays.stream(values()).map(ConfigKey::key).collect(Collectors.toUnmodifiableSet());
    }
}
