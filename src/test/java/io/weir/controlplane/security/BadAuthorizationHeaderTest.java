package io.weir.controlplane.security;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.controlplane.support.IntegrationTest;
import io.weir.controlplane.support.RawRequest;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * Truncated, garbage, oversized and non-ASCII {@code Authorization} headers each answer 401 with
 * a problem+json body that holds no stack trace and does not repeat what was sent, and nothing
 * of it reaches the log.
 */
@ExtendWith(OutputCaptureExtension.class)
class BadAuthorizationHeaderTest extends IntegrationTest {

    private static final String TENANTS = "/api/v1/tenants";

    private RawRequest.Response send(String... headerLines) {
        return RawRequest.send(port, "GET", TENANTS, headerLines);
    }

    private RawRequest.Response send(byte[] headerLine) {
        return RawRequest.sendBytes(port, "GET", TENANTS, List.of(headerLine));
    }

    private static void assertRefused(RawRequest.Response r, String sent) {
        assertThat(r.status()).as(r.toString()).isEqualTo(401);
        assertThat(r.header("Content-Type")).startsWith("application/problem+json");
        assertThat(r.header("WWW-Authenticate")).startsWith("Bearer");
        assertThat(r.body()).contains("\"status\":401")
                .doesNotContain("Exception").doesNotContain("\tat ").doesNotContain("java.");
        String credential = sent.length() > 7 ? sent.substring(7).trim() : "";
        if (credential.length() >= 8) {
            assertThat(r.body()).doesNotContain(credential);
        }
    }

    private void assertRefused(String value) {
        assertRefused(send("Authorization: " + value), value);
    }

    @Test
    void schemeWithoutCredentialsIsRefused() {
        assertRefused("Bearer");
        assertRefused("Bearer ");
        assertRefused("Bearer    ");
    }

    @Test
    void otherSchemesAreRefused() {
        assertRefused("Basic xyz");
        assertRefused("Basic " + java.util.Base64.getEncoder().encodeToString("admin:admin".getBytes()));
        assertRefused("Digest username=\"admin\"");
    }

    @Test
    void garbageIsRefused() {
        assertRefused("Bearer !!!$$$%%%");
        assertRefused("Bearer weir_" + "0".repeat(32) + "_" + "A".repeat(43));
        assertRefused("Bearer a.b.c");
        assertRefused("Bearer " + ADMIN_TOKEN + "x");
    }

    @Test
    void tenKilobytesOfJunkReachTheFilterAndAreRefused() {
        // Above Tomcat's default 8 KB header limit: server.max-http-request-header-size lets it in.
        assertRefused("Bearer " + "Zz9".repeat(3500));
        assertRefused("x".repeat(10 * 1024));
    }

    @Test
    void nonAsciiIsRefused() {
        assertRefused(send(("Authorization: Bearer weir_\u00fc\u00df\u4e2d\u6587").getBytes(StandardCharsets.UTF_8)), "");
        assertRefused(send(("Authorization: Bearer " + ADMIN_TOKEN.substring(0, 20) + "\u00e9")
                .getBytes(StandardCharsets.ISO_8859_1)), "");
    }

    @Test
    void twoAuthorizationHeadersAreRefusedEvenIfOneIsValid() {
        assertRefused(send("Authorization: Bearer " + ADMIN_TOKEN, "Authorization: Bearer junk"), "");
    }

    @Test
    void theAdminTokenWorksThroughTheSameRawClient() {
        RawRequest.Response r = send("Authorization: Bearer " + ADMIN_TOKEN);
        assertThat(r.status()).isEqualTo(200);
    }

    @Test
    void refusedAndAcceptedCredentialsNeverReachTheLog(CapturedOutput output) {
        String unknown = "weir_" + "ab".repeat(16) + "_" + "S3cr3tS3cr3tS3cr3tS3cr3tS3cr3tS3cr3tS3cr3tX";
        assertRefused("Bearer " + unknown);
        assertThat(send("Authorization: Bearer " + ADMIN_TOKEN).status()).isEqualTo(200);
        assertThat(output.getAll()).doesNotContain("S3cr3tS3cr3t").doesNotContain(ADMIN_TOKEN);
    }
}
