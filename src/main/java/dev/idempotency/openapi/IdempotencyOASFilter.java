package dev.idempotency.openapi;

import dev.idempotency.IdempotencyConfigurationException;
import dev.idempotency.config.ConfigErrors;
import dev.idempotency.config.ConfigKey;
import dev.idempotency.config.GlobalSettings;

import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.Components;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.PathItem;
import org.eclipse.microprofile.openapi.models.callbacks.Callback;
import org.eclipse.microprofile.openapi.models.headers.Header;
import org.eclipse.microprofile.openapi.models.links.Link;
import org.eclipse.microprofile.openapi.models.media.Schema;
import org.eclipse.microprofile.openapi.models.parameters.Parameter;
import org.eclipse.microprofile.openapi.models.parameters.RequestBody;
import org.eclipse.microprofile.openapi.models.responses.APIResponse;
import org.eclipse.microprofile.openapi.models.security.SecurityScheme;
import org.eclipse.microprofile.openapi.models.servers.Server;
import org.eclipse.microprofile.openapi.models.tags.Tag;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The MicroProfile OpenAPI filter that shows each {@code @Idempotent} JAX-RS operation as its clients meet it: the key
 * header (required or optional, its length), the answers the library gives itself as problem+json (400, 401, 409 with
 * {@code Retry-After}, 413, 422, 503), {@code Idempotent-Replayed} and the expiry header on the statuses it keeps, and
 * the key's lifetime and scope as the {@code x-idempotency} extension. Operations it does not guard are left alone, and
 * what the application wrote itself wins.
 *
 * <p>Registered by the library ({@code mp.openapi.filter}, at the lowest configuration ordinal), so it needs no line of
 * configuration, but on Quarkus (which reads that key from its own files when it builds the application); an
 * application with a filter of its own names it in {@code idempotency.openapi.filter}, and it runs first (it does not
 * see what the library adds). The runtimes create it without CDI (some while the application deploys), so it reads the configuration and the
 * compile-time list of guarded classes itself. Not API: applications name its class, nothing else.
 */
public class IdempotencyOASFilter implements OASFilter {

    private static final Logger LOG = Logger.getLogger(IdempotencyOASFilter.class.getName());

    private final ClassLoader loader;
    private final Config config;
    private final GlobalSettings global;
    private final OASFilter next;

    /** Created by the OpenAPI runtime. */
    public IdempotencyOASFilter() {
        this(applicationLoader(), null);
    }

    /** With the loader that sees the application (its classes and their compile-time list) and its configuration. */
    IdempotencyOASFilter(ClassLoader loader, Config config) {
        this.loader = loader;
        this.config = config != null ? config : ConfigProvider.getConfig(loader);
        GlobalSettings read = null;
        try {
            ConfigErrors errors = new ConfigErrors();
            read = GlobalSettings.read(this.config, errors);
            if (!errors.all().isEmpty()) {
                // the application's deployment fails on them with every detail; the document is left as it is
                LOG.log(Level.WARNING, "idempotency-jakarta leaves the OpenAPI document as it is: its configuration has"
                        + " mistakes ({0})", errors.all().get(0).getMessage());
                read = null;
            }
        } catch (RuntimeException e) {
            // never the reason an application's document (or its deployment, where the runtime filters while deploying) fails
            LOG.log(Level.WARNING, "idempotency-jakarta leaves the OpenAPI document as it is: it could not read its configuration", e);
        }
        this.global = read;
        // a filter of the application's named in idempotency.openapi.filter: a mistake there fails as a deployment does
        this.next = read == null ? null : chained(read.openApiFilter(), loader);
    }

    /** The class loader that sees the application's classes: the thread's where it sees this library too, else the library's. */
    private static ClassLoader applicationLoader() {
        ClassLoader own = IdempotencyOASFilter.class.getClassLoader();
        ClassLoader context = Thread.currentThread().getContextClassLoader();
        if (context != null && context != own) {
            try {
                if (Class.forName(IdempotencyOASFilter.class.getName(), false, context) == IdempotencyOASFilter.class) {
                    return context;
                }
            } catch (ClassNotFoundException | LinkageError e) {
                // the thread's loader is not the application's
            }
        }
        return own;
    }

    /** The application's own filter, named in {@code idempotency.openapi.filter}: a mistake fails as a deployment does. */
    private static OASFilter chained(String className, ClassLoader loader) {
        if (className.isEmpty()) {
            return null;
        }
        String key = ConfigKey.OPENAPI_FILTER.key();
        try {
            Class<?> c = Class.forName(className, true, loader);
            if (!OASFilter.class.isAssignableFrom(c) || IdempotencyOASFilter.class.isAssignableFrom(c)) {
                throw new IdempotencyConfigurationException(key + "=" + className + " is not an OpenAPI filter of the application's"
                        + " (a class implementing org.eclipse.microprofile.openapi.OASFilter, other than this library's)");
            }
            return (OASFilter) c.getDeclaredConstructor().newInstance();
        } catch (ClassNotFoundException e) {
            throw new IdempotencyConfigurationException(key + "=" + className + ": no such class in the application", e);
        } catch (ReflectiveOperationException | LinkageError e) {
            throw new IdempotencyConfigurationException(key + "=" + className + " cannot be created with its public no-argument"
                    + " constructor: " + e, e);
        }
    }

    @Override
    public void filterOpenAPI(OpenAPI openAPI) {
        if (next != null) {
            next.filterOpenAPI(openAPI);
        }
        if (global == null || !global.openApiEnabled()) {
            return;
        }
        GuardedResources.Found found;
        try {
            found = GuardedResources.find(loader, config, global);
        } catch (RuntimeException | LinkageError e) {
            // never the reason an application's document (or its deployment, where the runtime filters while deploying) fails
            LOG.log(Level.WARNING, "idempotency-jakarta leaves the OpenAPI document as it is: it could not read the application's"
                    + " @Idempotent operations", e);
            return;
        }
        if (!found.listed()) {
            LOG.warning("idempotency-jakarta cannot describe the application's @Idempotent operations in its OpenAPI document:"
                    + " the application was compiled without the library's annotation processor (" + GuardedResources.INDEX
                    + " is missing). javac runs it by itself up to JDK 22 when the build names no processors; on JDK 23 and"
                    + " later (-proc:full), with Maven's annotationProcessorPaths or with Gradle, name the library as an"
                    + " annotation processor (see the guide, \"OpenAPI\"), or set idempotency.openapi.enabled=false");
            return;
        }
        int decorated;
        try {
            decorated = new OpenApiDecoration(global).decorate(openAPI, found);
        } catch (RuntimeException | LinkageError e) {
            LOG.log(Level.WARNING, "idempotency-jakarta could not describe the application's @Idempotent operations in its"
                    + " OpenAPI document", e);
            return;
        }
        LOG.log(Level.FINE, "idempotency-jakarta described {0} of {1} @Idempotent operations in the OpenAPI document",
                new Object[] {decorated, found.operations().size()});
    }

    // The application's own filter, where there is one, sees every element first.

    @Override
    public PathItem filterPathItem(PathItem pathItem) {
        return next == null ? pathItem : next.filterPathItem(pathItem);
    }

    @Override
    public Operation filterOperation(Operation operation) {
        return next == null ? operation : next.filterOperation(operation);
    }

    @Override
    public Parameter filterParameter(Parameter parameter) {
        return next == null ? parameter : next.filterParameter(parameter);
    }

    @Override
    public Header filterHeader(Header header) {
        return next == null ? header : next.filterHeader(header);
    }

    @Override
    public RequestBody filterRequestBody(RequestBody requestBody) {
        return next == null ? requestBody : next.filterRequestBody(requestBody);
    }

    @Override
    public APIResponse filterAPIResponse(APIResponse apiResponse) {
        return next == null ? apiResponse : next.filterAPIResponse(apiResponse);
    }

    @Override
    public Schema filterSchema(Schema schema) {
        return next == null ? schema : next.filterSchema(schema);
    }

    @Override
    public SecurityScheme filterSecurityScheme(SecurityScheme securityScheme) {
        return next == null ? securityScheme : next.filterSecurityScheme(securityScheme);
    }

    @Override
    public Server filterServer(Server server) {
        return next == null ? server : next.filterServer(server);
    }

    @Override
    public Tag filterTag(Tag tag) {
        return next == null ? tag : next.filterTag(tag);
    }

    @Override
    public Link filterLink(Link link) {
        return next == null ? link : next.filterLink(link);
    }

    @Override
    public Callback filterCallback(Callback callback) {
        return next == null ? callback : next.filterCallback(callback);
    }
}
