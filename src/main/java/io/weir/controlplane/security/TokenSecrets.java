package io.weir.controlplane.security;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.UUID;
import java.util.regex.Pattern;

/**
 * The text of Weir API tokens: how secrets are made, how a presented secret names its token, and
 * how it is verified.
 *
 * <h2>Format</h2>
 * {@code weir_<id>_<secret>}: the prefix makes leaked tokens easy to recognise (and to scan for),
 * {@code <id>} is the token's UUID as 32 hex digits so the token is found by primary key, and
 * {@code <secret>} is {@value #SECRET_BYTES} bytes from {@link SecureRandom} in unpadded
 * base64url (256 bits of entropy).
 *
 * <h2>Verification</h2>
 * Only SHA-256 of the whole token text is stored. A fast hash is enough because the secret is
 * high-entropy: nobody can search 2^256 candidates, so a slow password hash would only cost CPU
 * on every request. Hashes are compared with {@link MessageDigest#isEqual}, which takes the same
 * time wherever the first difference is.
 *
 * <h2>Operator-chosen tokens</h2>
 * The bootstrap token from {@code WEIR_BOOTSTRAP_TOKEN} may be any string of at least
 * {@value #MIN_CHOSEN_LENGTH} token characters. If it is not in the format above it gets a random
 * id and is found by the hash of its text (a unique index). Its id is never derived from the
 * secret: ids are shown (in the audit log, in token lists), and a derived one would let anybody
 * who sees it test guesses of the secret offline.
 */
public final class TokenSecrets {

    /** Every Weir token starts with this. */
    public static final String PREFIX = "weir_";

    /** Random bytes in a generated secret: 256 bits. */
    public static final int SECRET_BYTES = 32;

    /** Shortest operator-chosen token accepted, so it cannot be guessed. */
    public static final int MIN_CHOSEN_LENGTH = 32;

    /** Longest credential looked at; anything longer is refused unread. */
    public static final int MAX_LENGTH = 4096;

    /** RFC 6750 b64token: the only characters a bearer credential may have. */
    public static final Pattern B64TOKEN = Pattern.compile("[A-Za-z0-9\\-._~+/]+=*");

    private static final Pattern WEIR_FORMAT = Pattern.compile("weir_([0-9a-f]{32})_[A-Za-z0-9_-]{43}");

    private static final SecureRandom RANDOM = new SecureRandom();

    private TokenSecrets() {
    }

    /** A new token text for the token {@code id}. */
    public static String generate(UUID id) {
        byte[] secret = new byte[SECRET_BYTES];
        RANDOM.nextBytes(secret);
        return PREFIX + hex(id) + "_" + Base64.getUrlEncoder().withoutPadding().encodeToString(secret);
    }

    /** Whether {@code text} has the characters and length of a bearer credential. */
    public static boolean wellFormed(String text) {
        return text != null && !text.isEmpty() && text.length() <= MAX_LENGTH && B64TOKEN.matcher(text).matches();
    }

    /** Whether {@code text} is a generated Weir token. */
    public static boolean isWeirFormat(String text) {
        return WEIR_FORMAT.matcher(text).matches();
    }

    /**
     * The id a generated Weir token names in its text.
     *
     * @throws IllegalArgumentException if {@code text} is not in the Weir format
     */
    public static UUID idOf(String text) {
        var m = WEIR_FORMAT.matcher(text);
        if (!m.matches()) {
            throw new IllegalArgumentException("not a weir_<id>_<secret> token");
        }
        String h = m.group(1);
        return new UUID(Long.parseUnsignedLong(h.substring(0, 16), 16), Long.parseUnsignedLong(h.substring(16), 16));
    }

    /** SHA-256 of the token text: what is stored. */
    public static byte[] hash(String text) {
        return sha256(text.getBytes(StandardCharsets.UTF_8));
    }

    /** Whether {@code text} hashes to {@code storedHash}, in constant time. */
    public static boolean matches(String text, byte[] storedHash) {
        return MessageDigest.isEqual(hash(text), storedHash);
    }

    private static String hex(UUID id) {
        return HexFormat.of().formatHex(ByteBuffer.allocate(16)
                .putLong(id.getMostSignificantBits()).putLong(id.getLeastSignificantBits()).array());
    }

    private static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java platform", e);
        }
    }
}
