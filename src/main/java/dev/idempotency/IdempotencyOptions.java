package dev.idempotency;

import java.time.Duration;
import java.util.List;

/**
 * What {@link Idempotency#with} runs its calls with: the members of {@link Idempotent}, for code without the
 * annotation. What is not set is the configured default ({@code idempotency.ttl}, {@code idempotency.lease},
 * {@code idempotency.claim}, {@code idempotency.on-concurrent}, {@code idempotency.wait-timeout},
 * {@code idempotency.required}). Checked when built, with the messages a deployment gives for the annotation.
 *
 * <pre>{@code
 * IdempotencyOptions options = IdempotencyOptions.builder()
 *         .ttl(Duration.ofDays(1)).claim(ClaimMode.OPTIMISTIC).onConcurrent(OnConcurrent.WAIT).build();
 * }</pre>
 *
 * @param ttl          how long a result is kept and replayed; {@code null}: {@code idempotency.ttl}
 * @param lease        leased claims: how long a claim is held without renewal; {@code null}: {@code idempotency.lease}
 * @param claim        how the key is claimed; {@link ClaimMode#DEFAULT}: {@code idempotency.claim}
 * @param onConcurrent {@code REJECT} or {@code WAIT} while the first call runs; {@link OnConcurrent#DEFAULT}: configured
 * @param waitTimeout  how long a {@code WAIT} duplicate waits; {@code null}: {@code idempotency.wait-timeout}
 * @param keepOn       failures stored and rethrown on every retry (each needs a public {@code (String)} or {@code ()}
 *                     constructor)
 * @param releaseOn    failures that always release the key, even when also {@code keepOn}
 * @param required     whether a call without a key is refused; {@code null}: {@code idempotency.required}
 */
public record IdempotencyOptions(Duration ttl, Duration lease, ClaimMode claim, OnConcurrent onConcurrent, Duration waitTimeout,
                                 List<Class<? extends Throwable>> keepOn, List<Class<? extends Throwable>> releaseOn,
                                 Boolean required) {

    /** The configured defaults for everything. */
    public static final IdempotencyOptions DEFAULTS = builder().build();

    /**
     * Checks the options.
     *
     * @throws IdempotencyConfigurationException a duration that is not positive (a negative wait), a ttl shorter than
     *                                           the lease, a kept failure that cannot be rebuilt
     */
    public IdempotencyOptions {
        claim = claim == null ? ClaimMode.DEFAULT : claim;
        onConcurrent = onConcurrent == null ? OnConcurrent.DEFAULT : onConcurrent;
        keepOn = List.copyOf(keepOn == null ? List.of() : keepOn);
        releaseOn = List.copyOf(releaseOn == null ? List.of() : releaseOn);
        StringBuilder problems = new StringBuilder();
        if (ttl != null && (ttl.isZero() || ttl.isNegative())) {
            problems.append("; ttl must be a positive duration, not ").append(ttl);
        }
        if (lease != null && (lease.isZero() || lease.isNegative())) {
            problems.append("; lease must be a positive duration, not ").append(lease);
        }
        if (waitTimeout != null && waitTimeout.isNegative()) {
            problems.append("; waitTimeout must be zero or more, not ").append(waitTimeout);
        }
        if (ttl != null && lease != null && ttl.compareTo(lease) < 0) {
            problems.append("; they keep their records for ").append(ttl).append(" (ttl), less than their lease of ").append(lease)
                    .append(": a running call's record would expire while it runs, and a retry would run it again; make ttl at least the lease");
        }
        for (Class<? extends Throwable> kept : keepOn) {
            if (!canRebuild(kept)) {
                problems.append("; they keep ").append(kept.getName()).append(", which has no public constructor taking a String")
                        .append(" (or none): give it one, or remove it from keepOn");
            }
        }
        if (!problems.isEmpty()) {
            throw new IdempotencyConfigurationException("Idempotency options: " + problems.substring(2));
        }
    }

    private static boolean canRebuild(Class<? extends Throwable> type) {
        for (Class<?>[] parameters : List.of(new Class<?>[] {String.class}, new Class<?>[0])) {
            try {
                if (java.lang.reflect.Modifier.isPublic(type.getConstructor(parameters).getModifiers())
                        && !java.lang.reflect.Modifier.isAbstract(type.getModifiers())) {
                    return true;
                }
            } catch (NoSuchMethodException e) {
                // try the next
            }
        }
        return false;
    }

    /** @return a builder with nothing set: every option its configured default */
    public static Builder builder() {
        return new Builder();
    }

    /** Builds {@link IdempotencyOptions}; {@link #build()} checks them. */
    public static final class Builder {
        private Duration ttl;
        private Duration lease;
        private ClaimMode claim = ClaimMode.DEFAULT;
        private OnConcurrent onConcurrent = OnConcurrent.DEFAULT;
        private Duration waitTimeout;
        private List<Class<? extends Throwable>> keepOn = List.of();
        private List<Class<? extends Throwable>> releaseOn = List.of();
        private Boolean required;

        private Builder() {
        }

        /** @param ttl how long a result is kept and replayed @return this */
        public Builder ttl(Duration ttl) {
            this.ttl = ttl;
            return this;
        }

        /** @param lease leased claims: how long a claim is held without renewal @return this */
        public Builder lease(Duration lease) {
            this.lease = lease;
            return this;
        }

        /** @param claim how the key is claimed @return this */
        public Builder claim(ClaimMode claim) {
            this.claim = claim;
            return this;
        }

        /** @param onConcurrent what a duplicate does while the first call runs @return this */
        public Builder onConcurrent(OnConcurrent onConcurrent) {
            this.onConcurrent = onConcurrent;
            return this;
        }

        /** @param waitTimeout how long a {@code WAIT} duplicate waits @return this */
        public Builder waitTimeout(Duration waitTimeout) {
            this.waitTimeout = waitTimeout;
            return this;
        }

        /** @param types failures stored and rethrown on every retry @return this */
        @SafeVarargs
        public final Builder keepOn(Class<? extends Throwable>... types) {
            this.keepOn = List.of(types);
            return this;
        }

        /** @param types failures that always release the key @return this */
        @SafeVarargs
        public final Builder releaseOn(Class<? extends Throwable>... types) {
            this.releaseOn = List.of(types);
            return this;
        }

        /** @param required whether a call without a key is refused @return this */
        public Builder required(boolean required) {
            this.required = required;
            return this;
        }

        /**
         * @return the options
         * @throws IdempotencyConfigurationException when they cannot work (see {@link IdempotencyOptions})
         */
        public IdempotencyOptions build() {
            return new IdempotencyOptions(ttl, lease, claim, onConcurrent, waitTimeout, keepOn, releaseOn, required);
        }
    }
}
