package dev.idempotency.testing;

import dev.idempotency.IdempotencyKey;
import dev.idempotency.cdi.IdempotencyBuildCompatibleExtension;
import dev.idempotency.interceptor.IdempotentInterceptor;

import jakarta.enterprise.inject.build.compatible.spi.BeanInfo;
import jakarta.enterprise.inject.build.compatible.spi.ClassConfig;
import jakarta.enterprise.inject.build.compatible.spi.Discovery;
import jakarta.enterprise.inject.build.compatible.spi.Enhancement;
import jakarta.enterprise.inject.build.compatible.spi.MetaAnnotations;
import jakarta.enterprise.inject.build.compatible.spi.Registration;
import jakarta.enterprise.inject.build.compatible.spi.ScannedClasses;
import jakarta.enterprise.inject.build.compatible.spi.Synthesis;
import jakarta.enterprise.inject.build.compatible.spi.SyntheticComponents;
import jakarta.enterprise.lang.model.declarations.ClassInfo;

/**
 * The library's build compatible extension as a CDI Lite container (Quarkus's ArC) runs it, for Weld: Weld, which runs
 * portable extensions, never runs a build compatible one marked {@code @SkipIfPortableExtensionPresent}; this subclass
 * is not marked, and declares the extension's methods again (Weld calls the methods a build compatible extension
 * declares). Register it with {@code Weld.addBuildCompatibleExtensions}, and no portable extension of the library's.
 */
public class CdiLite extends IdempotencyBuildCompatibleExtension {
    @Override
    @Discovery
    public void discover(ScannedClasses scan, MetaAnnotations meta) {
        super.discover(scan, meta);
    }

    @Override
    @Enhancement(types = IdempotentInterceptor.class)
    public void priority(ClassConfig interceptor) {
        super.priority(interceptor);
    }

    @Override
    @Registration(types = Object.class)
    public void idempotentBean(BeanInfo bean) {
        super.idempotentBean(bean);
    }

    @Override
    @Enhancement(types = Object.class, withSubtypes = true, withAnnotations = IdempotencyKey.class)
    public void keyType(ClassInfo type) {
        super.keyType(type);
    }

    @Override
    @Synthesis
    public void synthesize(SyntheticComponents components) {
        super.synthesize(components);
    }
}
