package dev.idempotency.http;

import dev.resteasy.embedded.server.UndertowBuilderConfigurator;

import io.undertow.Undertow;

/** Enough Undertow workers for 32 concurrent requests that wait (registered in META-INF/services). */
public class WorkerThreads implements UndertowBuilderConfigurator {
    @Override
    public void configure(Undertow.Builder builder) {
        builder.setWorkerThreads(80);
    }
}
