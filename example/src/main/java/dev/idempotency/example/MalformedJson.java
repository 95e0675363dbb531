package dev.idempotency.example;

import jakarta.json.JsonException;
import jakarta.json.bind.JsonbException;
import jakarta.ws.rs.ProcessingException;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.ExceptionMapper;
import jakarta.ws.rs.ext.Provider;

import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A request body that is not JSON, or not JSON of the request's shape ({@code {"amount":1,}}, {@code
 * {"amount":"ten"}}), is answered {@code 400} problem {@code https://idempotency.dev/example/problems/invalid-request}
 * like every other invalid request ({@link Problems#invalid}), not with the server's {@code 500} page.
 *
 * <p>The JSON-B provider reports such a body in a {@link ProcessingException} (Jersey on Payara, and RESTEasy on
 * WildFly and Open Liberty inside its own 400) whose cause is a {@link JsonbException} or a JSON-P
 * {@link JsonException}; a provider may also throw either as it is. One mapper per type ({@link OnProcessing},
 * {@link OnJsonb}, {@link OnJsonP}); a {@code ProcessingException} for any other reason stays a {@code 500}. The
 * detail names neither the body nor the parser's message (which may quote the body).
 */
public final class MalformedJson {

    private static final Logger LOG = Logger.getLogger(MalformedJson.class.getName());
    private static final int MAX_CAUSES = 64;

    /** The detail of the 400. */
    static final String DETAIL = "The request body is not valid JSON of the expected shape "
            + "({\"amount\": n, \"currency\": \"EUR\", ...}). Fix the body and send it again";

    private MalformedJson() {
    }

    /** The message body reader's failure (Jersey, RESTEasy). */
    @Provider
    public static final class OnProcessing implements ExceptionMapper<ProcessingException> {
        @Override
        public Response toResponse(ProcessingException e) {
            if (isJson(e)) {
                return Problems.invalid(DETAIL);
            }
            LOG.log(Level.SEVERE, "A request failed", e);
            return Response.serverError().build();
        }
    }

    /** JSON-B's failure, thrown as it is. */
    @Provider
    public static final class OnJsonb implements ExceptionMapper<JsonbException> {
        @Override
        public Response toResponse(JsonbException e) {
            return Problems.invalid(DETAIL);
        }
    }

    /** JSON-P's failure (a parse error is its {@code JsonParsingException}), thrown as it is. */
    @Provider
    public static final class OnJsonP implements ExceptionMapper<JsonException> {
        @Override
        public Response toResponse(JsonException e) {
            return Problems.invalid(DETAIL);
        }
    }

    /** Whether {@code e}'s cause chain holds a JSON-B or JSON-P failure. */
    static boolean isJson(Throwable e) {
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Throwable t = e; t != null && seen.add(t) && seen.size() <= MAX_CAUSES; t = t.getCause()) {
            if (t instanceof JsonbException || t instanceof JsonException) {
                return true;
            }
        }
        return false;
    }
}
