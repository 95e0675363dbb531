package dev.idempotency.openapi;

import javax.annotation.processing.AbstractProcessor;
import javax.annotation.processing.RoundEnvironment;
import javax.annotation.processing.SupportedAnnotationTypes;
import javax.lang.model.SourceVersion;
import javax.lang.model.element.Element;
import javax.lang.model.element.TypeElement;
import javax.tools.Diagnostic;
import javax.tools.StandardLocation;
import java.io.IOException;
import java.io.Writer;
import java.util.Set;
import java.util.TreeSet;

/**
 * Lists, as the application compiles, the classes that carry {@code @Idempotent} (on the class or on a method) and the
 * JAX-RS applications ({@code @ApplicationPath}), in {@value GuardedResources#INDEX}: the OpenAPI filter reads it, because
 * an OpenAPI runtime calls its filter before (or without) CDI and names no Java method for an operation. javac finds
 * this processor on the class path by itself up to JDK 22; from JDK 23 on, the build names it (the guide's OpenAPI
 * section). It reads annotation names only, so it needs nothing on the processor path but this library.
 */
@SupportedAnnotationTypes({GuardedResources.IDEMPOTENT, GuardedResources.APPLICATION_PATH})
public final class GuardedResourceProcessor extends AbstractProcessor {

    private final Set<String> lines = new TreeSet<>();

    @Override
    public SourceVersion getSupportedSourceVersion() {
        return SourceVersion.latestSupported();
    }

    @Override
    public boolean process(Set<? extends TypeElement> annotations, RoundEnvironment round) {
        for (TypeElement annotation : annotations) {
            boolean application = annotation.getQualifiedName().contentEquals(GuardedResources.APPLICATION_PATH);
            for (Element e : round.getElementsAnnotatedWith(annotation)) {
                TypeElement type = enclosingType(e);
                if (type != null) {
                    String name = processingEnv.getElementUtils().getBinaryName(type).toString();
                    lines.add((application ? GuardedResources.APPLICATION : GuardedResources.RESOURCE) + " " + name);
                }
            }
        }
        if (round.processingOver() && !lines.isEmpty()) {
            write();
        }
        return false;
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
