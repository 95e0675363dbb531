package dev.idempotency.jaxrs;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/** The stored form of an HTTP response always encodes: what does not fit is stored as the over-cap case. */
class StoredHttpResponseTest {

    static final List<Map.Entry<String, String>> LOCATION = List.of(Map.entry("Location", "/payments/1"));

    @Test
    void aResponseThatFitsIsStoredWhole() {
        StoredHttpResponse r = StoredHttpResponse.storable(201, LOCATION, new byte[] {1, 2, 3}, false);
        StoredHttpResponse back = StoredHttpResponse.decode(r.encode());
        assertThat(back.bodyOmitted()).isFalse();
        assertThat(back.body()).containsExactly(1, 2, 3);
        assertThat(back.headers()).isEqualTo(LOCATION);
    }

    @Test
    void aHeaderOverTheFormsLimitIsLeftOutWithTheBody() {
        List<Map.Entry<String, String>> headers = List.of(LOCATION.get(0), Map.entry("Link", "é".repeat(40_000)));
        StoredHttpResponse back = StoredHttpResponse.decode(StoredHttpResponse.storable(200, headers, new byte[] {1}, false).encode());
        assertThat(back.bodyOmitted()).isTrue();
        assertThat(back.body()).isEmpty();
        assertThat(back.headers()).isEqualTo(LOCATION);
    }

    @Test
    void headersAndBodyOverTheColumnAreStoredWithoutTheBody() {
        List<Map.Entry<String, String>> headers = List.of(LOCATION.get(0), Map.entry("ETag", "\"" + "e".repeat(60_000) + "\""));
        byte[] body = new byte[StoredHttpResponse.MAX_STORED_BYTES - 1_000];
        StoredHttpResponse r = StoredHttpResponse.storable(200, headers, body, false);
        byte[] stored = r.encode();
        assertThat(stored.length).isLessThanOrEqualTo(StoredHttpResponse.MAX_STORED_BYTES);
        StoredHttpResponse back = StoredHttpResponse.decode(stored);
        assertThat(back.bodyOmitted()).isTrue();
        assertThat(back.headers()).isEqualTo(headers);
    }
}
