package dev.idempotency.jaxrs;

import dev.idempotency.IdempotencyInProgressException;
import dev.idempotency.IdempotencyKeyReusedException;
import dev.idempotency.IdempotencyStoreException;
import dev.idempotency.runtime.IdempotencyRuntime;
import dev.idempotency.config.AnonymousPolicy;
import dev.idempotency.config.GlobalSettings;
import dev.idempotency.config.MethodSettings;
import dev.idempotency.core.ClaimFlow;
import dev.idempotency.core.Claimed;
import dev.idempotency.core.Decision;
import dev.idempotency.core.Fingerprint;
import dev.idempotency.core.IdempotencyEngine;
import dev.idempotency.core.KeyRules;
import dev.idempotency.spi.ScopedKey;

import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.ContainerResponseContext;
import jakarta.ws.rs.container.ContainerResponseFilter;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MultivaluedMap;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;
import jakarta.ws.rs.ext.RuntimeDelegate;
import jakarta.ws.rs.ext.WriterInterceptor;
import jakarta.ws.rs.ext.WriterInterceptorContext;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The {@code Idempotency-Key} door for one resource method (the guide's HTTP page, docs/http.adoc): registered by
 * {@link IdempotencyFeature} only on {@code @Idempotent} resource methods, with that method's settings.
 *
 * <ul>
 * <li>request: check the key (400), fingerprint method, path, query, content type and body (the body is read up to
 *     the method's {@code maxRequestSize}, else 413, buffered and handed on, still readable), then claim, replay (with
 *     {@code Idempotent-Replayed: true}), or answer 422, 409 (with {@code Retry-After}) or 503;</li>
 * <li>response: a status not to keep releases the key; a kept one is stored (status, replayable headers,
 *     body bytes) before the body is sent.</li>
 * </ul>
 *
 * <p>Over 400 lines on purpose: JAX-RS hands one request to three callbacks of one provider (request filter, response
 * filter, writer interceptor), which share the request's claim through its properties; the parts that stand alone are
 * rooms of their own ({@link CappedCapture}, {@link JsonBody}, {@link StoredHttpResponse}, {@link Problems}).
 */
final class IdempotencyHttpFilter implements ContainerRequestFilter, ContainerResponseFilter, WriterInterceptor {

    private static final Logger LOG = Logger.getLogger(IdempotencyHttpFilter.class.getName());
    private static final String CLAIMED = IdempotencyHttpFilter.class.getName() + ".claimed";
    private static final String STATUS = IdempotencyHttpFilter.class.getName() + ".status";
    private static final String END = IdempotencyHttpFilter.class.getName() + ".end";
    private static final byte[] EMPTY = new byte[0];
    static final String REPLAYED = "Idempotent-Replayed";

    private final MethodSettings method;
    private final IdempotencyRuntime runtime;
    /** What this method's requests ask the runtime for, asked once: not through its CDI proxy on every request. */
    private volatile Resolved resolved;

    /** The global settings (read at deployment) and this method's claim flow (chosen when the engine started). */
    private record Resolved(GlobalSettings global, ClaimFlow flow) {
    }

    /** Whether the resource answers later, on another thread: it suspends its response, or returns a CompletionStage. */
    private final boolean answersLater;

    IdempotencyHttpFilter(MethodSettings method, IdempotencyRuntime runtime) {
        this.method = method;
        this.runtime = runtime;
        this.answersLater = method.async() || java.util.Arrays.stream(method.method().getParameterAnnotations())
                .flatMap(java.util.Arrays::stream)
                .anyMatch(a -> a.annotationType().getName().equals("jakarta.ws.rs.container.Suspended"));
    }

    /** Asked on the first request, when the engine has started: a filter is built before it is. */
    private Resolved resolved() {
        Resolved r = resolved;
        if (r == null) {
            r = new Resolved(runtime.settings(), runtime.flow(method));
            resolved = r;
        }
        return r;
    }

    // ------------------------------------------------------------------------------------------ request

    @Override
    public void filter(ContainerRequestContext request) throws IOException {
        String header = method.http().header();
        GlobalSettings global = resolved().global();
        List<String> values = method.http().keyFromHeader() ? request.getHeaders().get(header) : null;
        String key = null;
        byte[] body = null;
        jakarta.json.JsonStructure json = null;
        if (values != null && !values.isEmpty()) {
            key = unquote(values.get(0).strip());
            String problem = values.size() > 1 ? "is sent more than once" : KeyRules.problem(key, global.maxKeyLength());
            if (problem != null) {
                reject(request, false, "its key " + problem, Problems.keyInvalid(header, problem, global.maxKeyLength()));
                return;
            }
        } else if (!method.http().keyFrom().isEmpty()) {
            // The key from a body field, when the client sent no header (or the header is not looked at).
            body = body(request);
            if (body == null) {
                return; // 413
            }
            json = JsonBody.parse(body);
            if (json == null) {
                reject(request, false, "its body is not JSON", Problems.bodyInvalid());
                return;
            }
            jakarta.json.JsonValue field = jsonBody().key(json);
            if (field == null) {
                if (method.required()) {
                    reject(request, true, "no key in the body's " + method.http().keyFrom(),
                            Problems.keyMissing(method.http().keyFromHeader() ? header : null, method.http().keyFrom()));
                }
                return;
            }
            key = JsonBody.keyText(field);
            String problem = key == null ? "is not a string or a number" : KeyRules.problem(key, global.maxKeyLength());
            if (problem != null) {
                reject(request, false, "its body's key " + problem, Problems.keyFieldInvalid(method.http().keyFrom(), problem, global.maxKeyLength()));
                return;
            }
        }
        if (key == null) {
            if (method.required()) {
                reject(request, true, "no " + header + " header", Problems.keyMissing(header));
            }
            return;
        }
        String principal = principal(request, global);
        if (principal == null) {
            return; // aborted: 401 or 400
        }
        if (body == null) {
            body = body(request);
            if (body == null) {
                return; // 413
            }
        }
        Fingerprint fingerprint = Fingerprint.start()
                .add(request.getMethod())
                .add(request.getUriInfo().getRequestUri().getRawPath())
                .add(request.getUriInfo().getRequestUri().getRawQuery())
                .add(request.getHeaderString(HttpHeaders.CONTENT_TYPE));
        if (method.http().fingerprintFields().isEmpty()) {
            fingerprint.add(body);
        } else {
            // Only the chosen fields, so that a retry that differs elsewhere (a timestamp, a nonce) is the same request.
            json = json != null ? json : JsonBody.parse(body);
            if (json == null) {
                reject(request, false, "its body is not JSON", Problems.bodyInvalid());
                return;
            }
            String missing = jsonBody().missingField(json);
            if (missing != null) {
                reject(request, false, "its body has no " + missing, Problems.bodyFieldMissing(missing));
                return;
            }
            jsonBody().addFields(fingerprint, json);
        }
        ScopedKey scopedKey = global.atRest(new ScopedKey(method.namespace(), principal, key));
        String fingerprintHex = fingerprint.hex();
        try {
            Decision decision = resolved().flow().hold(scopedKey, fingerprintHex, null, method.policy());
            if (decision instanceof Decision.Replay replay) {
                Response answer = replay(StoredHttpResponse.decode(replay.record().response()));
                expiry(answer.getHeaders(), replay.record().expiresAt());
                request.abortWith(answer);
            } else {
                // Settled once, on this thread, by the response side (atomic: the resource method, the writing of its
                // response and the answer run in the transaction the claim opened).
                Claimed claimed = ((Decision.Held) decision).claimed();
                request.setProperty(CLAIMED, claimed);
                dev.idempotency.runtime.RequestEnd end = runtime.requestEnd(); // only a held claim needs the request's end
                dev.idempotency.runtime.RequestEnd.Claims claims = end == null ? null : end.claims(); // one look-up
                if (claims != null) {
                    claims.callKey(scopedKey); // what the keys of the messages the resource method sends derive from
                }
                if (claims != null && !answersLater) {
                    // Settled at the latest when the request ends: when neither the response filter nor the writer
                    // runs (an application's response filter threw before this one), its transaction must not stay
                    // open on the request's thread, nor its key held.
                    claims.settleAtEnd(claimed, () -> settleUnseen(claimed));
                    request.setProperty(END, claims);
                } else if (claims != null) {
                    // A resource that answers later, on another thread: the request's first dispatch may end before
                    // its answer, so it is settled once the answer was processed (the interceptor hands the answer on).
                    claims.answerLater(claimed, () -> settleUnseen(claimed), LaterAnswers::watcher);
                    request.setProperty(END, claims);
                }
            }
        } catch (IdempotencyKeyReusedException e) {
            request.abortWith(Problems.keyReused(header));
        } catch (IdempotencyInProgressException e) {
            request.abortWith(Problems.inProgress(e.retryAfter().toSeconds()));
        } catch (IdempotencyStoreException e) {
            if (method.http().failOpen()) {
                LOG.log(Level.WARNING, "The idempotency store failed; " + method.describe()
                        + " runs unprotected (fail open)", e);
                return;
            }
            LOG.log(Level.WARNING, "The idempotency store failed; answering 503 for " + method.describe(), e);
            request.abortWith(Problems.storeUnavailable());
        }
    }

    /**
     * The principal part of the key: the authenticated caller's, else what the method's anonymous policy
     * says: the shared {@code anonymous}, the client header's {@code anonymous:<id>}, or {@code null} after aborting
     * the request ({@code 401}, or {@code 400} for a malformed client header).
     */
    private String principal(ContainerRequestContext request, GlobalSettings global) {
        SecurityContext security = request.getSecurityContext();
        java.security.Principal caller = security == null ? null : security.getUserPrincipal();
        boolean authenticated = caller != null && caller.getName() != null && !caller.getName().isEmpty();
        String credentials = request.getHeaderString(HttpHeaders.AUTHORIZATION);
        if (!authenticated && credentials != null && global.scopeByPrincipal()) {
            // Credentials the server did not accept (a wrong password on a resource no constraint protects): the request
            // is not an anonymous caller's, and must not run in the scope every anonymous caller shares.
            LOG.log(Level.FINE, "Rejected a keyed request to {0}: its credentials were not accepted", method.describe());
            request.abortWith(Problems.credentialsRefused(challenge(credentials, global)));
            return null;
        }
        AnonymousPolicy anonymous = method.http().anonymous();
        if (anonymous.mode() == AnonymousPolicy.Mode.ALLOW || authenticated) {
            return ScopedKey.principalOf(caller, global.scopeByPrincipal());
        }
        if (anonymous.mode() == AnonymousPolicy.Mode.REJECT) {
            LOG.log(Level.FINE, "Rejected a keyed request to {0}: no authenticated caller", method.describe());
            request.abortWith(Problems.unauthenticated(null, challenge(null, global)));
            return null;
        }
        List<String> clients = request.getHeaders().get(anonymous.header());
        if (clients == null || clients.isEmpty()) {
            LOG.log(Level.FINE, "Rejected a keyed request to {0}: no authenticated caller and no {1} header",
                    new Object[] {method.describe(), anonymous.header()});
            request.abortWith(Problems.unauthenticated(anonymous.header(), challenge(null, global)));
            return null;
        }
        String client = clients.get(0).strip();
        String problem = clients.size() > 1 ? "is sent more than once" : KeyRules.problem(client, AnonymousPolicy.MAX_CLIENT_ID);
        if (problem != null) {
            LOG.log(Level.FINE, "Rejected a keyed request to {0}: its {1} header {2}", new Object[] {method.describe(), anonymous.header(), problem});
            request.abortWith(Problems.clientIdInvalid(anonymous.header(), problem));
            return null;
        }
        return AnonymousPolicy.CLIENT_PREFIX + client;
    }

    /**
     * The {@code WWW-Authenticate} challenge of a {@code 401}: the scheme of the credentials the request sent (the client
     * learns they were refused), else {@code idempotency.www-authenticate}.
     */
    private static String challenge(String credentials, GlobalSettings global) {
        if (credentials != null) {
            String scheme = credentials.strip().split("[ \t]", 2)[0];
            if (scheme.equalsIgnoreCase("Basic")) {
                return "Basic realm=\"idempotency\", charset=\"UTF-8\""; // Basic's challenge needs a realm (RFC 7617)
            }
            if (!scheme.isEmpty() && scheme.matches("[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}")) {
                return scheme;
            }
        }
        return global.wwwAuthenticate();
    }

    private volatile JsonBody jsonBody;

    /** The method's JSON Pointers, compiled on its first request that needs them. */
    private JsonBody jsonBody() {
        JsonBody b = jsonBody;
        if (b == null) {
            b = new JsonBody(method.http().keyFrom(), method.http().fingerprintFields());
            jsonBody = b;
        }
        return b;
    }

    /**
     * The body, read once and handed on to the resource method; {@code null} when it is over the method's
     * {@code maxRequestSize}, the request having been answered {@code 413}. A {@code Content-Length} over the cap is
     * answered before a byte is kept; a body without one (chunked) is kept up to one byte past the cap and no further,
     * so that a request holds at most the cap in memory. What is sent past that is thrown away up to {@link #SWALLOW}.
     */
    private byte[] body(ContainerRequestContext request) throws IOException {
        if (!request.hasEntity()) {
            return EMPTY;
        }
        long cap = method.http().maxRequestSize();
        long declared = contentLength(request.getHeaderString(HttpHeaders.CONTENT_LENGTH));
        if (declared > cap) {
            if (declared <= SWALLOW) {
                swallow(request.getEntityStream());
            }
            tooLarge(request, cap, "its Content-Length is " + declared + " bytes");
            return null;
        }
        // Read as far as the declared length and one byte more (a body of a few dozen bytes takes a buffer of its size, not
        // the stream's 8 KiB chunk), then, only when the body goes on past it (an application's filter inflated it), on to
        // the cap.
        java.io.InputStream in = request.getEntityStream();
        int first = (int) (declared >= 0 ? Math.min(declared, cap) + 1 : cap + 1);
        byte[] body = in.readNBytes(first);
        if (body.length == first && first <= cap) {
            byte[] rest = in.readNBytes((int) cap + 1 - first);
            byte[] whole = java.util.Arrays.copyOf(body, first + rest.length);
            System.arraycopy(rest, 0, whole, first, rest.length);
            body = whole;
        }
        if (body.length > cap) {
            swallow(request.getEntityStream());
            tooLarge(request, cap, "its body is longer than " + cap + " bytes");
            return null;
        }
        request.setEntityStream(new ByteArrayInputStream(body));
        return body;
    }

    /**
     * How much of a refused body is read and thrown away, so that the client, still sending it, can read the
     * {@code 413} on its connection (as Tomcat's {@code maxSwallowSize}); the rest of a larger one is left unread, and
     * the server closes the connection after the answer.
     */
    static final int SWALLOW = 4 << 20;

    private static void swallow(java.io.InputStream in) {
        byte[] sink = new byte[8192];
        try {
            for (long left = SWALLOW; left > 0; ) {
                int n = in.read(sink, 0, (int) Math.min(sink.length, left));
                if (n < 0) {
                    return;
                }
                left -= n;
            }
        } catch (IOException e) {
            LOG.log(Level.FINE, "The client went away while its refused body was read", e);
        }
    }

    /** A Content-Length as a number, -1 when there is none; one too large for a long counts as the largest. */
    static long contentLength(String header) {
        if (header == null || header.isBlank()) {
            return -1;
        }
        String digits = header.strip();
        for (int i = 0; i < digits.length(); i++) {
            char c = digits.charAt(i);
            if (c < '0' || c > '9') {
                return -1; // malformed: the container answers it, or the read below is capped anyway
            }
        }
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            return Long.MAX_VALUE;
        }
    }

    private void tooLarge(ContainerRequestContext request, long cap, String why) {
        LOG.log(Level.FINE, "Rejected a request to {0}: {1} (maxRequestSize {2})", new Object[] {method.describe(), why, cap});
        request.abortWith(Problems.requestTooLarge(cap));
    }

    /** Answers a request whose key (or body) is missing or malformed: nothing runs; counted and logged. */
    private void reject(ContainerRequestContext request, boolean missing, String why, Response problem) {
        LOG.log(Level.FINE, "Rejected a request to {0}: {1}", new Object[] {method.describe(), why});
        runtime.engine().observer().keyRejected(method.namespace(), missing);
        request.abortWith(problem);
    }

    /** The draft sends the key as a structured-field string, {@code "abc"}; a bare token is accepted too. */
    static String unquote(String value) {
        if (value.length() >= 2 && value.charAt(0) == '"' && value.charAt(value.length() - 1) == '"') {
            return value.substring(1, value.length() - 1).replace("\\\"", "\"").replace("\\\\", "\\");
        }
        return value;
    }

    private static Response replay(StoredHttpResponse stored) {
        Response.ResponseBuilder b = Response.status(stored.status());
        for (Map.Entry<String, String> h : stored.headers()) {
            if (stored.bodyOmitted() && h.getKey().equalsIgnoreCase(HttpHeaders.CONTENT_TYPE)) {
                continue;
            }
            b.header(h.getKey(), h.getValue());
        }
        if (stored.body().length > 0) {
            b.entity(stored.body());
        }
        return b.header(REPLAYED, "true").build();
    }

    // ----------------------------------------------------------------------------------------- response

    /**
     * The runtime began to process the answer of a resource that answers later (the first of the response filters):
     * from here on, its request's end settles the claim if this filter and its writer never see the answer.
     */
    void answering(ContainerRequestContext request) {
        // (none once the door took it: the response filters may run again for a response the writer's failure mapped)
        if (request.getProperty(END) instanceof dev.idempotency.runtime.RequestEnd.Claims claims && request.getProperty(CLAIMED) != null) {
            claims.answering(request.getProperty(CLAIMED));
        }
    }

    /** Whether the resource answers later, on another thread. */
    boolean answersLater() {
        return answersLater;
    }

    /**
     * The door settles the claim now: it is no longer the request end's to settle.
     *
     * @return whether the door is to settle it; {@code false} when the request's end settled it already
     */
    private static boolean take(java.util.function.Function<String, Object> get, java.util.function.Consumer<String> remove) {
        Object claimed = get.apply(CLAIMED);
        remove.accept(CLAIMED);
        return !(get.apply(END) instanceof dev.idempotency.runtime.RequestEnd.Claims claims) || claims.take(claimed);
    }

    /**
     * Settles a claim whose response this filter never saw (an application's response filter before it threw and the
     * runtime answered on its own, or the request ended without a response). Atomic and optimistic give it up (the work
     * rolls back with the transaction); leased keeps a 500 without a body, since the resource's work has committed and
     * a retry must not run it again.
     */
    private void settleUnseen(Claimed claimed) {
        if (resolved().flow().workCommitsWithAnswer()) {
            LOG.log(Level.FINE, "Giving up the key of {0}: its response did not pass the response filter", method.describe());
            claimed.giveUp();
        } else {
            LOG.log(Level.WARNING, "The response of {0} did not pass the response filter; its key keeps a 500 without"
                    + " a body, so that a retry does not run it again", method.describe());
            settle(claimed, StoredHttpResponse.storable(500, List.of(), EMPTY, true));
        }
    }

    @Override
    public void filter(ContainerRequestContext request, ContainerResponseContext response) {
        Claimed claimed = (Claimed) request.getProperty(CLAIMED);
        if (claimed == null) {
            return;
        }
        int status = response.getStatus();
        if (!method.http().keepStatus().contains(status)) {
            if (!take(request::getProperty, request::removeProperty)) {
                return;
            }
            LOG.log(Level.FINE, "Giving up the key of {0}: status {1} is not kept", new Object[] {method.describe(), status});
            claimed.giveUp();
            return;
        }
        expiry(response.getHeaders(), claimed.ticket().expiresAt());
        if (!response.hasEntity()) {
            if (!take(request::getProperty, request::removeProperty)) {
                return;
            }
            Response problem = settle(claimed, StoredHttpResponse.storable(status, replayable(response.getHeaders()), EMPTY, false));
            if (problem != null) {
                // Another answer replaces the response whole: none of its headers (an ETag, a cookie, the expiry of
                // what was not kept) may go out with it.
                response.getHeaders().clear();
                response.setStatus(problem.getStatus());
                response.getHeaders().putAll(problem.getHeaders());
                response.setEntity(problem.getEntity());
            }
            return;
        }
        request.setProperty(STATUS, status);
    }

    @Override
    public void aroundWriteTo(WriterInterceptorContext context) throws IOException {
        Claimed claimed = (Claimed) context.getProperty(CLAIMED);
        if (claimed == null) {
            context.proceed();
            return;
        }
        // Atomic: the answer commits the transaction, and only then are the same bytes sent (the first client and every
        // replay get identical bodies). Leased: the response is sent whether or not it could be stored (the operation
        // ran and committed).
        if (!take(context::getProperty, context::removeProperty)) {
            context.proceed();
            return;
        }
        if (!(context.getProperty(STATUS) instanceof Integer)) {
            // This filter's response side never saw the response (a response filter before it threw, and the runtime
            // answered on its own): the claim is settled here rather than left open.
            settleUnseen(claimed);
            context.proceed();
            return;
        }
        writeAndStore(context, claimed::giveUp, response -> {
            Response problem = settle(claimed, response);
            if (problem != null) {
                throw new jakarta.ws.rs.WebApplicationException("The response was not kept", problem);
            }
            return true;
        });
    }

    /**
     * The application's writer turns the entity into bytes, held here; they are stored, then sent. A body over the size
     * cap is stored without its body when it outgrows the cap, before any of it is sent (in atomic and optimistic modes
     * that is the commit: a response whose transaction rolls back is never sent as a success), then sent as it is
     * written. When the writer fails before the response was stored, the claim is given up; when storing fails, nothing
     * is sent (the client gets a 503, or the answer that replaces the response).
     */
    private void writeAndStore(WriterInterceptorContext context, Runnable giveUp,
                               java.util.function.Predicate<StoredHttpResponse> store) throws IOException {
        int status = (Integer) context.getProperty(STATUS);
        OutputStream out = context.getOutputStream();
        CappedCapture capture = new CappedCapture(out, method.http().maxResponseSize(), () -> {
            LOG.log(Level.FINE, "The response of {0} is over {1} bytes: stored without its body, before it is sent",
                    new Object[] {method.describe(), method.http().maxResponseSize()});
            if (!store.test(StoredHttpResponse.storable(status, replayable(context.getHeaders()), EMPTY, true))) {
                throw new jakarta.ws.rs.WebApplicationException("The response could not be stored; nothing was kept",
                        Problems.storeUnavailable());
            }
        });
        context.setOutputStream(capture);
        try {
            context.proceed();
        } catch (IOException | RuntimeException e) {
            context.setOutputStream(out);
            if (capture.refused() != null) {
                throw capture.refused(); // settled past the cap and not kept: its answer replaces the response
            }
            if (capture.settled()) {
                // Kept (and committed) when the body outgrew the cap; then the rest could not be written (the client
                // went away): a retry is answered the status and headers, never run again.
                LOG.log(Level.WARNING, "The response of " + method.describe() + " was kept without its body, then could not"
                        + " be written to the end (" + e + ")");
                throw e;
            }
            if (resolved().flow().workCommitsWithAnswer()) {
                giveUp.run(); // the work rolls back with its transaction: the retry runs it again
            } else {
                // Leased: the resource ran and its work committed; a retry must not run it again. What is known of its
                // answer is kept, as for a body over the size cap: the status and headers, without the body.
                LOG.log(Level.WARNING, "The response of " + method.describe() + " could not be written (" + e
                        + "); its status and headers are kept without its body, so that a retry does not run it again");
                store.test(StoredHttpResponse.storable(status, replayable(context.getHeaders()), EMPTY, true));
            }
            throw e;
        } finally {
            context.setOutputStream(out);
        }
        if (capture.overflowed()) {
            return; // stored when it outgrew the cap, before any of it was sent
        }
        List<Map.Entry<String, String>> headers = replayable(context.getHeaders());
        byte[] body = capture.held();
        StoredHttpResponse storable = StoredHttpResponse.storable(status, headers, body, false);
        if (storable.bodyOmitted()) {
            LOG.log(Level.WARNING, "The response of {0} does not fit the stored form (a header over 64 KiB, or over 16 MiB"
                    + " in all): stored as a body over the size cap is, without its body", method.describe());
        }
        if (!store.test(storable)) {
            throw new jakarta.ws.rs.WebApplicationException("The response could not be stored; nothing was kept",
                    Problems.storeUnavailable());
        }
        out.write(body);
    }

    /**
     * Keeps the response; null when it is kept, or when the claim's work cannot be undone any more (leased: the
     * operation ran and committed; a failure to keep its answer is logged and the response goes out, and a retry after
     * the lease may run it again). Else the problem to answer instead, nothing having been kept (the client must not
     * get the response as a success): {@code 409} when another node committed the key first (a multi-primary database;
     * its retry replays), {@code 422} when another request with the key (another body) stored its answer first,
     * {@code 503} when the answer or the commit failed. A transaction the application marked for
     * rollback rolls back and nothing is kept: an error or a refusal (4xx) goes out as it is, but a success is answered
     * {@code 500} problem {@code rolled-back} (the client must not believe done what was undone).
     */
    private Response settle(Claimed claimed, StoredHttpResponse response) {
        boolean undone = resolved().flow().workCommitsWithAnswer();
        try {
            if (!claimed.complete(response.encode()) && undone && response.status() < 400) {
                LOG.log(Level.FINE, "{0}: its transaction was marked for rollback; its {1} is answered 500 rolled-back",
                        new Object[] {method.describe(), response.status()});
                return Problems.rolledBack();
            }
            return null;
        } catch (dev.idempotency.core.AnsweredFirst e) {
            // Another call of the key (on a node whose marker this one could not see) stored its answer first: this
            // request's work rolled back, and the client gets the first answer, as its retry would.
            LOG.log(Level.FINE, "{0}: another call stored the key''s answer first; this request''s work rolled back and"
                    + " the first answer is sent", method.describe());
            Response answer = replay(StoredHttpResponse.decode(e.record().response()));
            expiry(answer.getHeaders(), e.record().expiresAt());
            return answer;
        } catch (dev.idempotency.IdempotencyInProgressException e) {
            LOG.log(Level.FINE, "{0}: another node committed the key first; this request''s work rolled back", method.describe());
            return Problems.inProgress(e.retryAfter().toSeconds());
        } catch (IdempotencyKeyReusedException e) {
            // Another request with the key (another body, ...) stored its answer first: this one's work rolled back.
            LOG.log(Level.FINE, "{0}: another request with the key stored its answer first; this request''s work rolled back",
                    method.describe());
            return Problems.keyReused(method.http().header());
        } catch (RuntimeException e) {
            if (!undone) {
                LOG.log(Level.SEVERE, "Could not store the response of " + method.describe() + " for the "
                        + claimed.ticket().scopedKey() + "; a retry after the lease may run it again", e);
                return null;
            }
            LOG.log(Level.SEVERE, "Could not store the response of " + method.describe() + " for the "
                    + claimed.ticket().scopedKey() + "; its transaction rolled back and the retry runs it again", e);
            return Problems.storeUnavailable();
        }
    }

    /** IMF-fixdate (RFC 9110): {@code Tue, 24 Nov 2026 09:30:00 GMT}. */
    private static final java.time.format.DateTimeFormatter HTTP_DATE = java.time.format.DateTimeFormatter
            .ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.ENGLISH).withZone(java.time.ZoneOffset.UTC);

    /**
     * When the method's expiry header ({@code idempotency.expiry-header}, or its own {@code expiryHeader}) names a
     * header: until when the key is remembered (the record's expiry, rounded down to the second), on a response that is
     * kept and on its replays.
     */
    private void expiry(MultivaluedMap<String, Object> headers, java.time.Instant expiresAt) {
        String name = method.http().expiryHeader();
        if (!name.isEmpty() && expiresAt != null) {
            headers.putSingle(name, HTTP_DATE.format(expiresAt));
        }
    }

    private List<Map.Entry<String, String>> replayable(MultivaluedMap<String, Object> headers) {
        java.util.Set<String> allowed = resolved().global().replayHeaders();
        List<Map.Entry<String, String>> out = new ArrayList<>();
        for (Map.Entry<String, List<Object>> h : headers.entrySet()) {
            if (!allowed.contains(h.getKey().toLowerCase(Locale.ROOT))) {
                continue;
            }
            for (Object value : h.getValue()) {
                if (value != null) {
                    out.add(Map.entry(h.getKey(), headerString(value)));
                }
            }
        }
        return out;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static String headerString(Object value) {
        if (value instanceof String s) {
            return s;
        }
        if (value instanceof java.net.URI uri) {
            return uri.toASCIIString(); // what the runtimes' URI header delegates write (a Location), without the lookup
        }
        try {
            RuntimeDelegate.HeaderDelegate delegate = RuntimeDelegate.getInstance().createHeaderDelegate(value.getClass());
            return delegate == null ? value.toString() : delegate.toString(value);
        } catch (IllegalArgumentException e) {
            return value.toString();
        }
    }
}
