package dev.idempotency.runtime;

import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;
import jakarta.json.bind.JsonbConfig;
import jakarta.json.bind.config.PropertyOrderStrategy;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * What an argument's fingerprint text costs (the interceptor and the functional API fingerprint each argument as JSON):
 * the library's {@code canonical} text, whose every object is read and written again by JSON-P so that a map's members
 * come in the order of their names and numbers in one form, beside its floor, the JSON-B text alone (what it was until
 * 2026-11-26 for an argument without a map out of order). Two arguments: a payment request as a record of six
 * properties (the common case), and an order with a nested map and a list of three lines.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class FingerprintBenchmark {

    public record PaymentRequest(String account, BigDecimal amount, String currency, String reference, long placedAt, boolean urgent) {
    }

    public record Line(String sku, int quantity, BigDecimal price) {
    }

    public record Order(String customer, List<Line> lines, Map<String, String> attributes, BigDecimal total) {
    }

    JsonCodec codec;
    Jsonb jsonb;
    PaymentRequest payment = new PaymentRequest("DE89370400440532013000", new BigDecimal("1000.00"), "EUR", "invoice 2026-1001",
            1_795_000_000_000L, false);
    Order order = new Order("alice", List.of(new Line("sku-1", 2, new BigDecimal("9.99")), new Line("sku-2", 1, new BigDecimal("15000000")),
            new Line("sku-3", 5, new BigDecimal("0.5"))), Map.of("channel", "web", "campaign", "black-friday", "gift", "no"),
            new BigDecimal("15000022.48"));

    @Setup(Level.Trial)
    public void setUp() {
        codec = new JsonCodec();
        jsonb = JsonbBuilder.create(new JsonbConfig().withPropertyOrderStrategy(PropertyOrderStrategy.LEXICOGRAPHICAL).withFormatting(false));
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        codec.close();
        jsonb.close();
    }

    @Benchmark
    public String paymentCanonical() {
        return codec.canonical(payment, PaymentRequest.class);
    }

    @Benchmark
    public String paymentFloorJsonbAlone() {
        return jsonb.toJson(payment, PaymentRequest.class);
    }

    @Benchmark
    public String orderCanonical() {
        return codec.canonical(order, Order.class);
    }

    @Benchmark
    public String orderFloorJsonbAlone() {
        return jsonb.toJson(order, Order.class);
    }
}
