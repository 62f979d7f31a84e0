package io.weir.protocol;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Objects;

/**
 * Names the content of a {@link DesiredConfig}, so that an agent's {@code hello} says not only
 * which revision it enforces but which snapshot: {@code sha256:} and the hex SHA-256 of the
 * snapshot's frame as {@link AgentMessages#encode} writes it (members in declaration order, lists
 * in their order), the same bytes on both sides of the channel.
 *
 * <p>A revision alone does not identify a snapshot: every node's snapshot touched by one change
 * carries that change's revision, and after the control plane's database is restored from a
 * backup, revisions are handed out again for other content. An agent whose cache holds another
 * node's snapshot (its token was replaced by another node's) or a snapshot from before the
 * restore would otherwise be taken for up to date. The control plane compares the digest of the
 * node's desired config with the hello's and sends the config when they differ. Two equal
 * snapshots always have the same digest; a digest that differs only because the two sides run
 * different versions of this code costs one extra push, never a missed one.
 */
public final class ConfigDigest {

    /** Prefix naming the algorithm, so that another one can follow. */
    public static final String PREFIX = "sha256:";

    private ConfigDigest() {
    }

    /** The digest of {@code config}: {@value #PREFIX} and 64 lower-case hex digits. */
    public static String of(DesiredConfig config) {
        Objects.requireNonNull(config, "config");
        byte[] frame = AgentMessages.encode(new AgentMessage.ConfigPush(config)).getBytes(StandardCharsets.UTF_8);
        try {
            return PREFIX + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(frame));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
