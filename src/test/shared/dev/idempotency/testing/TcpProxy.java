package dev.idempotency.testing;

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
 * A TCP proxy on loopback in the test JVM, so that a test can cut the network to a server (a database, an Infinispan
 * Server) and restore it: {@link #cut()} closes every open connection and, until {@link #restore()}, accepts new ones
 * only to close them at once (a client's connection attempt fails, as against a server that is down). Plain sockets,
 * two threads per connection (one per direction). Shared by the root build's tests and the in-server tests
 * (src/test/shared, a test source directory of both).
 */
public final class TcpProxy implements AutoCloseable {

    private final InetSocketAddress upstream;
    private final ServerSocket server;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private volatile boolean cut;
    /** Connections held open in silence ({@link #stall()}): closed at {@link #restore()}. */
    private final Set<Socket> silenced = ConcurrentHashMap.newKeySet();
    private volatile boolean stalled;
    private volatile boolean closed;

    public TcpProxy(String upstreamHost, int upstreamPort) throws IOException {
        this.upstream = new InetSocketAddress(upstreamHost, upstreamPort);
        this.server = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::acceptLoop, "tcp-proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The port clients connect to. */
    public int port() {
        return server.getLocalPort();
    }

    /** Closes every open connection; new ones are closed as soon as they are accepted. */
    public void cut() {
        cut = true;
        for (Socket s : open) {
            closeQuietly(s);
        }
    }

    /**
     * A server that has stopped answering (a network black hole): open connections stay open and carry nothing any
     * more, new ones are accepted and held open, and nothing reaches the server, until {@link #restore()}.
     */
    public void stall() {
        stalled = true;
        silenced.addAll(open);
    }

    /** Connections go through again; those held in silence by {@link #stall()} are closed (as a reset). */
    public void restore() {
        cut = false;
        if (stalled) {
            stalled = false;
            for (Socket s : silenced) {
                closeQuietly(s);
            }
            silenced.clear();
        }
    }

    public boolean isCut() {
        return cut;
    }

    /** Connections passed to the server. */
    public long accepted() {
        return accepted.get();
    }

    /** Connections closed at once while cut. */
    public long refused() {
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
            if (stalled) {
                silenced.add(client);
                open.add(client);
                continue;
            }
            Socket upstreamSocket = new Socket();
            try {
                upstreamSocket.connect(upstream, 5_000);
                client.setTcpNoDelay(true);
                upstreamSocket.setTcpNoDelay(true);
            } catch (IOException e) {
                closeQuietly(client);
                closeQuietly(upstreamSocket);
                continue;
            }
            open.add(client);
            open.add(upstreamSocket);
            accepted.incrementAndGet();
            pump(client, upstreamSocket);
            pump(upstreamSocket, client);
            if (cut) {
                // cut() may have run between the check above and the registration
                closeQuietly(client);
                closeQuietly(upstreamSocket);
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
                    if (!stalled) {
                        out.write(buffer, 0, n);
                        out.flush();
                    }
                }
            } catch (IOException e) {
                // closed, by either side or by cut()
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
            }
        }, "tcp-proxy-pump");
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
