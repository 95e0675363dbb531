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

/**
 * A TCP proxy in front of a database that the test can make go silent, as a partition or a dead switch does: while
 * silent, every byte either way is dropped and nothing is closed, so that a client waits for an answer that never
 * comes. A side that closes meanwhile has its other side closed once the proxy is healed (as the packets of the close
 * arrive then), so that the database ends a session its client gave up on.
 */
public final class SilentProxy implements AutoCloseable {

    private final ServerSocket server;
    private final InetSocketAddress upstream;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Object heal = new Object();
    private volatile boolean silent;
    private volatile boolean closed;

    public SilentProxy(String host, int port) throws IOException {
        this.upstream = new InetSocketAddress(host, port);
        this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        Thread accept = new Thread(this::accept, "silent-proxy-accept");
        accept.setDaemon(true);
        accept.start();
    }

    /** The proxy's port on loopback. */
    public int port() {
        return server.getLocalPort();
    }

    /** From now on nothing goes through, and nothing is closed. */
    public void silence() {
        silent = true;
    }

    /** Bytes go through again; the sides that closed meanwhile are closed on the other side too. */
    public void heal() {
        synchronized (heal) {
            silent = false;
            heal.notifyAll();
        }
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = server.accept();
                Socket database = new Socket();
                database.connect(upstream, 5000);
                sockets.add(client);
                sockets.add(database);
                pump(client, database);
                pump(database, client);
            } catch (IOException e) {
                if (closed) {
                    return;
                }
            }
        }
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[8192];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buffer)) >= 0; ) {
                    if (!silent) {
                        out.write(buffer, 0, n);
                        out.flush();
                    }
                }
            } catch (IOException e) {
                // one side closed or reset: the other follows
            } finally {
                awaitHeal();
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "silent-proxy-pump");
        t.setDaemon(true);
        t.start();
    }

    private void awaitHeal() {
        synchronized (heal) {
            while (silent && !closed) {
                try {
                    heal.wait();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
        sockets.remove(s);
    }

    @Override
    public void close() throws IOException {
        closed = true;
        heal();
        server.close();
        for (Socket s : sockets) {
            closeQuietly(s);
        }
    }
}
