package dev.idempotency.it;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A TCP proxy in the test JVM between the nodes and PostgreSQL, so that a test can make the store unreachable:
 * {@link #cut()} closes every open connection and, until {@link #restore()}, accepts new ones only to close
 * them at once (the driver's connection attempt fails, as against a database that is down). Plain sockets,
 * two threads per connection (one per direction).
 */
final class StoreProxy implements AutoCloseable {

    private final InetSocketAddress upstream;
    private final ServerSocket server;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private volatile boolean cut;
    private volatile boolean closed;

    StoreProxy(String upstreamHost, int upstreamPort) throws IOException {
        this.upstream = new InetSocketAddress(upstreamHost, upstreamPort);
        this.server = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::acceptLoop, "store-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The port the nodes connect to. */
    int port() {
        return server.getLocalPort();
    }

    /** Closes every open connection; new ones are closed as soon as they are accepted. */
    void cut() {
        cut = true;
        for (Socket s : open) {
            closeQuietly(s);
        }
    }

    /** Connections go through again. */
    void restore() {
        cut = false;
    }

    boolean isCut() {
        return cut;
    }

    /** Connections passed to the database. */
    long accepted() {
        return accepted.get();
    }

    /** Connections closed at once while cut. */
    long refused() {
        return refused.get();
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(server);
        for (Socket s : open) {
            closeQuietly(s);
        }
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = server.accept();
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                continue;
            }
            if (cut) {
                refused.incrementAndGet();
                closeQuietly(client);
                continue;
            }
            Socket db = new Socket();
            try {
                db.connect(upstream, 5_000);
                client.setTcpNoDelay(true);
                db.setTcpNoDelay(true);
            } catch (IOException e) {
                closeQuietly(client);
                closeQuietly(db);
                continue;
            }
            open.add(client);
            open.add(db);
            accepted.incrementAndGet();
            pump(client, db);
            pump(db, client);
            if (cut) {
                // cut() may have run between the check above and the registration
                closeQuietly(client);
                closeQuietly(db);
            }
        }
    }

    /** Copies one direction until either side closes; then closes both. */
    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int n;
                while ((n = in.read(buffer)) >= 0) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // closed, by either side or by cut()
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
            }
        }, "store-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(java.io.Closeable c) {
        try {
            c.close();
        } catch (IOException e) {
            // already closed
        }
    }
}
