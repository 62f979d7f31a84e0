package io.weir.datanode;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The fixed newstyle handshake of one NBD connection, apart from transmission as nbdkit keeps it:
 * the greeting, the client's flags, the framing of each option (read whole up to
 * {@value #MAX_OPTION_BYTES}, skipped and refused above), the answer to each, and what was
 * negotiated (structured replies, the metadata context, whether the client skips the zeroes of
 * NBD_OPT_EXPORT_NAME's reply). {@link NbdConnection} reads the bytes and hands them here
 * ({@link #step}) until transmission. NBD_OPT_GO and NBD_OPT_EXPORT_NAME hand the connection over to transmission
 * ({@link NbdConnection#enterTransmission}). Every option reply's header is written in one place
 * ({@link #replyBuffer}). Selector thread only.
 */
final class NbdHandshake {

    private static final String TLS_FIRST = "this node requires TLS: send NBD_OPT_STARTTLS first";

    /** Largest option payload read into memory; a larger option is skipped with NBD_REP_ERR_TOO_BIG. */
    static final int MAX_OPTION_BYTES = 16 << 10;

    /** What the next bytes are: the client's flags, an option's header, its data, or a too large option's rest. */
    private enum Framing { FLAGS, HEADER, DATA, SKIP }

    private final NbdConnection conn;

    private Framing framing = Framing.FLAGS;
    /** The option being read, and its data's length (DATA) or what is left of it to skip (SKIP). */
    private int option;
    private int optionLength;
    private long skipRemaining;

    /** The client set NBD_FLAG_C_NO_ZEROES. */
    private boolean noZeroes;
    /** NBD_OPT_STRUCTURED_REPLY was negotiated. */
    private boolean structured;
    /** The export NBD_OPT_SET_META_CONTEXT named, or null. */
    private String metaContextExport;
    /** base:allocation is the negotiated metadata context (for {@link #metaContextExport} until transmission). */
    private boolean metaContext;

    NbdHandshake(NbdConnection conn) {
        this.conn = conn;
    }

    /** The greeting: the newstyle magic and the server's flags. */
    void greet() {
        ByteBuffer b = conn.pool.acquire(18);
        b.putLong(Nbd.NBDMAGIC).putLong(Nbd.IHAVEOPT).putShort((short) (Nbd.FLAG_FIXED_NEWSTYLE | Nbd.FLAG_NO_ZEROES)).flip();
        conn.send(b);
    }

    /**
     * Decodes the next unit of the handshake from {@code in} (in read mode): the client's flags,
     * an option's header, its data (then answered), or what arrived of a too large option; false
     * if more bytes are needed or the connection was closed.
     */
    boolean step(ByteBuffer in) throws IOException {
        switch (framing) {
            case FLAGS -> {
                if (in.remaining() < 4) {
                    return false;
                }
                int flags = in.getInt();
                if (!clientFlags(flags)) {
                    conn.abort("client set unknown flags " + Integer.toHexString(flags));
                    return false;
                }
                framing = Framing.HEADER;
                return true;
            }
            case HEADER -> {
                if (in.remaining() < 16) {
                    return false;
                }
                if (in.getLong() != Nbd.IHAVEOPT) {
                    conn.abort("bad option magic");
                    return false;
                }
                option = in.getInt();
                long len = Integer.toUnsignedLong(in.getInt());
                if (len > MAX_OPTION_BYTES) {
                    if (option == Nbd.OPT_EXPORT_NAME) {
                        conn.abort("export name too long");
                        return false;
                    }
                    if (option == Nbd.OPT_ABORT) { // acknowledged whatever its data (which it should not have)
                        reply(option, Nbd.REP_ACK, null);
                        conn.drain();
                        return false;
                    }
                    skipRemaining = len;
                    framing = Framing.SKIP;
                    return true;
                }
                optionLength = (int) len;
                framing = Framing.DATA;
                return true;
            }
            case DATA -> {
                if (in.remaining() < optionLength) {
                    return false;
                }
                int end = in.position() + optionLength;
                ByteBuffer data = in.slice(in.position(), optionLength).order(ByteOrder.BIG_ENDIAN);
                in.position(end);
                framing = Framing.HEADER; // before the answer, which may enter transmission
                handle(option, data);
                return true;
            }
            case SKIP -> {
                int n = (int) Math.min(skipRemaining, in.remaining());
                in.position(in.position() + n);
                skipRemaining -= n;
                if (skipRemaining > 0) {
                    return false;
                }
                framing = Framing.HEADER;
                tooBig(option);
                return true;
            }
            default -> throw new IllegalStateException(framing.name());
        }
    }

    /** Takes the client's flags; false if they hold one this server does not know. */
    private boolean clientFlags(int flags) {
        if ((flags & ~(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES)) != 0) {
            return false;
        }
        noZeroes = (flags & Nbd.FLAG_C_NO_ZEROES) != 0;
        return true;
    }

    /**
     * NBD_OPT_STARTTLS: acknowledged when the node has a certificate, then TLS from the next byte
     * on ({@link NbdTlsPeer#start}); everything negotiated before is forgotten, as the
     * protocol requires. Refused with data, a second time, or when the node has no certificate.
     */
    private void startTls(int opt, ByteBuffer data) {
        if (data.hasRemaining()) {
            reply(opt, Nbd.REP_ERR_INVALID, "NBD_OPT_STARTTLS takes no data");
            return;
        }
        if (conn.tls.isTls()) {
            reply(opt, Nbd.REP_ERR_INVALID, "TLS is already in use");
            return;
        }
        javax.net.ssl.SSLContext context = conn.server.tls.context();
        if (context == null) {
            reply(opt, Nbd.REP_ERR_UNSUP, "this node has no TLS certificate yet");
            return;
        }
        reply(opt, Nbd.REP_ACK, null);
        if (conn.tls.start(context)) {
            structured = false;
            metaContext = false;
            metaContextExport = null;
        }
    }

    /**
     * The export named {@code name} if this client may see it, else null: over TLS, only the
     * exports of its certificate's tenant (another tenant's export answers exactly as one that
     * does not exist); in clear, every export.
     */
    private VolumeStore visible(String name) {
        VolumeStore v = conn.server.exports.lookup(name);
        return v == null || sees(v) ? v : null;
    }

    /** The exports this client may see ({@link #visible}). */
    private java.util.Collection<VolumeStore> visibleExports() {
        java.util.Collection<VolumeStore> all = conn.server.exports.all();
        return conn.tls.isTls() ? all.stream().filter(this::sees).toList() : all;
    }

    private boolean sees(VolumeStore v) {
        if (!conn.tls.isTls()) {
            return true;
        }
        java.util.UUID tenant = conn.tls.tenant();
        return tenant != null && tenant.equals(v.tenantId);
    }

    /** Whether structured replies were negotiated. */
    boolean structured() {
        return structured;
    }

    /** Whether base:allocation was negotiated for the export in transmission (NBD_CMD_BLOCK_STATUS). */
    boolean metaContext() {
        return metaContext;
    }

    /** Whether {@code opt} is refused until TLS: the node requires it, and this is neither STARTTLS nor ABORT. */
    private boolean needsTlsFirst(int opt) {
        return conn.server.tls.required() && !conn.tls.isTls() && opt != Nbd.OPT_STARTTLS && opt != Nbd.OPT_ABORT;
    }

    /**
     * Answers an option whose data was too large to read, and was skipped: before TLS on a node
     * that requires it, as every option then ({@code NBD_REP_ERR_TLS_REQD}); else
     * {@code NBD_REP_ERR_TOO_BIG}; a SET_META_CONTEXT so refused leaves no context selected.
     * Selector thread.
     */
    private void tooBig(int opt) throws IOException {
        if (opt == Nbd.OPT_SET_META_CONTEXT) { // it replaces the contexts set before, also when it fails
            metaContext = false;
            metaContextExport = null;
        }
        if (needsTlsFirst(opt)) {
            reply(opt, Nbd.REP_ERR_TLS_REQD, TLS_FIRST);
        } else {
            reply(opt, Nbd.REP_ERR_TOO_BIG, "option too large");
        }
    }

    /**
     * Answers one option whose {@code data} has been read whole. Selector thread.
     */
    private void handle(int opt, ByteBuffer data) throws IOException {
        if (needsTlsFirst(opt)) {
            if (opt == Nbd.OPT_EXPORT_NAME) {
                // it cannot be refused politely either: the document requires a disconnect
                conn.abort("NBD_OPT_EXPORT_NAME before TLS, which this node requires");
            } else {
                reply(opt, Nbd.REP_ERR_TLS_REQD, TLS_FIRST);
            }
            return;
        }
        switch (opt) {
            case Nbd.OPT_EXPORT_NAME -> exportName(data);
            case Nbd.OPT_ABORT -> {
                reply(opt, Nbd.REP_ACK, null);
                conn.drain();
            }
            case Nbd.OPT_LIST -> {
                if (data.hasRemaining()) {
                    reply(opt, Nbd.REP_ERR_INVALID, "NBD_OPT_LIST takes no data");
                    return;
                }
                for (VolumeStore v : visibleExports()) {
                    byte[] name = v.exportName.getBytes(StandardCharsets.UTF_8);
                    ByteBuffer b = replyBuffer(opt, Nbd.REP_SERVER, 4 + name.length);
                    b.putInt(name.length).put(name).flip();
                    conn.send(b);
                }
                reply(opt, Nbd.REP_ACK, null);
            }
            case Nbd.OPT_STARTTLS -> startTls(opt, data);
            case Nbd.OPT_INFO, Nbd.OPT_GO -> infoOrGo(opt, data);
            case Nbd.OPT_STRUCTURED_REPLY -> {
                if (data.hasRemaining()) {
                    reply(opt, Nbd.REP_ERR_INVALID, "NBD_OPT_STRUCTURED_REPLY takes no data");
                    return;
                }
                structured = true;
                reply(opt, Nbd.REP_ACK, null);
            }
            case Nbd.OPT_LIST_META_CONTEXT, Nbd.OPT_SET_META_CONTEXT -> metaContextOption(opt, data);
            default -> reply(opt, Nbd.REP_ERR_UNSUP, "option " + opt + " is not supported");
        }
    }

    private void exportName(ByteBuffer data) {
        String name = string(data, data.remaining());
        VolumeStore v = name == null ? null : visible(name);
        if (v == null) {
            // NBD_OPT_EXPORT_NAME cannot fail politely: the document requires a disconnect
            conn.abort("unknown export '" + name + "'");
            return;
        }
        conn.enterTransmission(v, entered -> {
            if (!entered) {
                conn.abort("export '" + name + "' cannot be opened");
                return;
            }
            metaContext = metaContext && name.equals(metaContextExport);
            exportNameReply();
        });
    }

    private void exportNameReply() {
        ByteBuffer b = conn.pool.acquire(10 + 124);
        b.putLong(conn.exportSize()).putShort((short) transmissionFlags());
        if (!noZeroes) {
            for (int i = 0; i < 124; i++) {
                b.put((byte) 0);
            }
        }
        b.flip();
        conn.send(b);
    }

    private void infoOrGo(int opt, ByteBuffer data) throws IOException {
        String name = exportNameField(opt, data, 2);
        if (name == null) {
            return;
        }
        int requests = Short.toUnsignedInt(data.getShort());
        if (data.remaining() != requests * 2) {
            reply(opt, Nbd.REP_ERR_INVALID, "information request count does not match the option length");
            return;
        }
        boolean wantName = false;
        boolean wantBlockSize = false;
        for (int i = 0; i < requests; i++) {
            int info = Short.toUnsignedInt(data.getShort());
            wantName |= info == Nbd.INFO_NAME;
            wantBlockSize |= info == Nbd.INFO_BLOCK_SIZE;
        }
        VolumeStore v = visible(name);
        if (v == null) {
            reply(opt, Nbd.REP_ERR_UNKNOWN, "unknown export '" + name + "': this node serves "
                    + visibleExports().size() + " exports, named tenant/volume");
            return;
        }
        if (opt == Nbd.OPT_GO) {
            // Enter first: a GO that fails gets its error alone, no NBD_REP_INFO before it.
            boolean meta = metaContext && name.equals(metaContextExport);
            boolean infoName = wantName;
            boolean infoBlockSize = wantBlockSize;
            conn.enterTransmission(v, entered -> {
                if (!entered) {
                    reply(opt, Nbd.REP_ERR_UNKNOWN, "export '" + name + "' is being removed or cannot be opened");
                    return;
                }
                infoReplies(opt, name, conn.exportSize(), infoName, infoBlockSize);
                metaContext = meta;
                reply(opt, Nbd.REP_ACK, null);
            });
            return;
        }
        infoReplies(opt, name, v.size(), wantName, wantBlockSize);
        reply(opt, Nbd.REP_ACK, null);
    }

    /** The NBD_REP_INFO replies of a GO or INFO: the name and block sizes if asked, the size and flags always. */
    private void infoReplies(int opt, String name, long size, boolean wantName, boolean wantBlockSize) {
        if (wantName) {
            byte[] n = name.getBytes(StandardCharsets.UTF_8);
            ByteBuffer b = replyBuffer(opt, Nbd.REP_INFO, 2 + n.length);
            b.putShort((short) Nbd.INFO_NAME).put(n).flip();
            conn.send(b);
        }
        if (wantBlockSize) {
            ByteBuffer b = replyBuffer(opt, Nbd.REP_INFO, 14);
            b.putShort((short) Nbd.INFO_BLOCK_SIZE).putInt(1).putInt(VolumeStore.BLOCK).putInt(NbdConnection.MAX_PAYLOAD).flip();
            conn.send(b);
        }
        ByteBuffer b = replyBuffer(opt, Nbd.REP_INFO, 12);
        b.putShort((short) Nbd.INFO_EXPORT).putLong(size).putShort((short) transmissionFlags()).flip();
        conn.send(b);
    }

    private void metaContextOption(int opt, ByteBuffer data) throws IOException {
        if (opt == Nbd.OPT_SET_META_CONTEXT) {
            // replaces every context set before, also when it fails (the protocol document)
            metaContext = false;
            metaContextExport = null;
        }
        if (!structured) {
            reply(opt, Nbd.REP_ERR_INVALID, "negotiate NBD_OPT_STRUCTURED_REPLY first");
            return;
        }
        String name = exportNameField(opt, data, 4);
        if (name == null) {
            return;
        }
        long count = Integer.toUnsignedLong(data.getInt());
        List<String> queries = new ArrayList<>();
        for (long i = 0; i < count; i++) {
            if (data.remaining() < 4) {
                reply(opt, Nbd.REP_ERR_INVALID, "query count exceeds the option");
                return;
            }
            long len = Integer.toUnsignedLong(data.getInt());
            if (len > data.remaining()) {
                reply(opt, Nbd.REP_ERR_INVALID, "query length exceeds the option");
                return;
            }
            String q = string(data, (int) len);
            if (q == null) {
                reply(opt, Nbd.REP_ERR_INVALID, "query is not valid UTF-8");
                return;
            }
            queries.add(q);
        }
        if (data.hasRemaining()) {
            reply(opt, Nbd.REP_ERR_INVALID, "option length does not match its contents");
            return;
        }
        if (visible(name) == null) {
            reply(opt, Nbd.REP_ERR_UNKNOWN, "unknown export '" + name + "'");
            return;
        }
        boolean base;
        if (opt == Nbd.OPT_LIST_META_CONTEXT) {
            base = queries.isEmpty() || queries.stream().anyMatch(q -> q.equals("base:") || q.equals(Nbd.BASE_ALLOCATION));
        } else {
            base = queries.contains(Nbd.BASE_ALLOCATION);
            metaContext = base;
            metaContextExport = name;
        }
        if (base) {
            byte[] n = Nbd.BASE_ALLOCATION.getBytes(StandardCharsets.US_ASCII);
            ByteBuffer b = replyBuffer(opt, Nbd.REP_META_CONTEXT, 4 + n.length);
            b.putInt(opt == Nbd.OPT_SET_META_CONTEXT ? Nbd.BASE_ALLOCATION_ID : 0).put(n).flip();
            conn.send(b);
        }
        reply(opt, Nbd.REP_ACK, null);
    }

    /** The transmission flags of the export, as negotiated. */
    int transmissionFlags() {
        return Nbd.FLAG_HAS_FLAGS | Nbd.FLAG_SEND_FLUSH | Nbd.FLAG_SEND_FUA | Nbd.FLAG_SEND_TRIM
                | Nbd.FLAG_SEND_WRITE_ZEROES | Nbd.FLAG_CAN_MULTI_CONN | Nbd.FLAG_SEND_CACHE
                | (structured ? Nbd.FLAG_SEND_DF : 0);
    }

    private ByteBuffer replyBuffer(int opt, int type, int length) {
        ByteBuffer b = conn.pool.acquire(20 + length);
        b.putLong(Nbd.OPTION_REPLY_MAGIC).putInt(opt).putInt(type).putInt(length);
        return b;
    }

    /** Sends an option reply of {@code type} carrying {@code message} (none if null). */
    void reply(int opt, int type, String message) {
        byte[] m = Nbd.message(message);
        ByteBuffer b = replyBuffer(opt, type, m.length);
        b.put(m).flip();
        conn.send(b);
    }

    /**
     * The one parser of the export name that NBD_OPT_INFO, NBD_OPT_GO and the meta context options
     * start with: a 32-bit length and that many bytes of UTF-8, with at least {@code after} bytes
     * of the option left behind it. Answers NBD_REP_ERR_INVALID and returns null if it is not.
     */
    private String exportNameField(int opt, ByteBuffer data, int after) {
        if (data.remaining() < 4 + after) {
            reply(opt, Nbd.REP_ERR_INVALID, "option data too short");
            return null;
        }
        long nameLen = Integer.toUnsignedLong(data.getInt());
        if (nameLen > data.remaining() - after) {
            reply(opt, Nbd.REP_ERR_INVALID, "export name length exceeds the option");
            return null;
        }
        String name = string(data, (int) nameLen);
        if (name == null) {
            reply(opt, Nbd.REP_ERR_INVALID, "export name is not valid UTF-8 or longer than 4096 bytes");
        }
        return name;
    }

    /** Reads {@code len} bytes of strict UTF-8; null if invalid or too long (the position moves on regardless). */
    private static String string(ByteBuffer data, int len) {
        ByteBuffer s = data.slice(data.position(), len);
        data.position(data.position() + len);
        if (len > 4096) {
            return null;
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(s).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
