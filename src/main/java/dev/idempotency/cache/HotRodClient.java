package dev.idempotency.cache;

/**
 * Whether the Hot Rod client ({@code org.infinispan:infinispan-client-hotrod}, an optional dependency) is on the
 * class path. A class of its own, with no reference to the client: {@link RemoteCaches} names the client's classes,
 * and loading it where the client is absent fails ({@code NoClassDefFoundError}); the other cache modes never load it.
 */
public final class HotRodClient {

    static final String MANAGER_CLASS = "org.infinispan.client.hotrod.RemoteCacheManager";

    private HotRodClient() {
    }

    /** The client's {@code RemoteCacheManager} class, or {@code null} when it is not on the class path. */
    public static Class<?> managerClass() {
        try {
            return Class.forName(MANAGER_CLASS, false, HotRodClient.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            return null;
        }
    }
}
