package dev.idempotency.openapi;

import javax.annotation.processing.AbstractProcessor;
import javax.annotation.processing.RoundEnvironment;
import javax.annotation.processing.SupportedAnnotationTypes;
import javax.lang.model.SourceVersion;
import javax.lang.model.element.Element;
import javax.lang.model.element.TypeElement;
import javax.tools.Diagnostic;
import javax.tools.FileObject;
import javax.tools.StandardLocation;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.Writer;
import java.util.Set;
import java.util.TreeSet;

/**
 * Lists, as the application compiles, the classes that carry {@code @Idempotent} (on the class or on a method), the
 * JAX-RS resource classes ({@code @Path}: one may inherit its guarded methods) and the JAX-RS applications
 * ({@code @ApplicationPath}), in {@value GuardedResources#INDEX}: the OpenAPI filter reads it, because an OpenAPI runtime
 * calls its filter before (or without) CDI and names no Java method for an operation. javac finds this processor on the
 * class path by itself up to JDK 22 when the build names no processors; otherwise the build names it (the guide's
 * OpenAPI section). It reads annotation names only, so it needs nothing on the processor path but this library.
 *
 * <p>It claims no annotation, so that every other processor still sees them (javac's {@code -Xlint:processing} then
 * warns that none claimed them, as it does for most processors). A compilation of some sources only (an IDE's, a
 * development mode's) keeps the classes already listed that still exist.
 */
@SupportedAnnotationTypes({GuardedResources.IDEMPOTENT, GuardedResources.PATH, GuardedResources.APPLICATION_PATH})
public final class GuardedResourceProcessor extends AbstractProcessor {

    private final Set<String> lines = new TreeSet<>();

    @Override
    public SourceVersion getSupportedSourceVersion() {
        return SourceVersion.latestSupported();
    }

    @Override
    public boolean process(Set<? extends TypeElement> annotations, RoundEnvironment round) {
        for (TypeElement annotation : annotations) {
            String name = annotation.getQualifiedName().toString();
            boolean application = name.equals(GuardedResources.APPLICATION_PATH);
            for (Element e : round.getElementsAnnotatedWith(annotation)) {
                TypeElement type = enclosingType(e);
                if (type != null) {
                    String className = processingEnv.getElementUtils().getBinaryName(type).toString();
                    lines.add((application ? GuardedResources.APPLICATION : GuardedResources.RESOURCE) + " " + className);
                }
            }
        }
        if (round.processingOver() && !lines.isEmpty()) {
            write();
        }
        return false;
    }

    /** The lines of the list an earlier compilation wrote, for the classes that still exist. */
    private void keepEarlierLines() {
        try {
            FileObject earlier = processingEnv.getFiler().getResource(StandardLocation.CLASS_OUTPUT, "", GuardedResources.INDEX);
            try (BufferedReader in = new BufferedReader(earlier.openReader(true))) {
                for (String line = in.readLine(); line != null; line = in.readLine()) {
                    String[] parts = line.strip().split("\\s+");
                    if (parts.length == 2 && !line.startsWith("#")
                            && processingEnv.getElementUtils().getTypeElement(parts[1].replace('$', '.')) != null) {
                        lines.add(parts[0] + " " + parts[1]);
                    }
                }
            }
        } catch (IOException | IllegalArgumentException | IllegalStateException e) {
            // none yet, or the file system cannot read it back: this compilation's classes are the list
        }
    }

    private static TypeElement enclosingType(Element e) {
        for (Element at = e; at != null; at = at.getEnclosingElement()) {
            if (at instanceof TypeElement t) {
                return t;
            }
        }
        return null;
    }

    private void write() {
        keepEarlierLines();
        try (Writer out = processingEnv.getFiler()
                .createResource(StandardLocation.CLASS_OUTPUT, "", GuardedResources.INDEX)
                .openWriter()) {
            out.write("# idempotency-jakarta: the classes its OpenAPI filter looks at (written by the compiler)\n");
            for (String line : lines) {
                out.write(line);
                out.write('\n');
            }
        } catch (IOException e) {
            processingEnv.getMessager().printMessage(Diagnostic.Kind.WARNING, "idempotency-jakarta could not write "
                    + GuardedResources.INDEX + " (its OpenAPI filter will not describe this module's operations): " + e);
        }
    }
}
