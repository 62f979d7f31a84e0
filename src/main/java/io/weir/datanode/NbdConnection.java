package io.weir.datanode;

import io.weir.scheduler.IoKind;
import io.weir.scheduler.QueueFullException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * One NBD client connection: the fixed newstyle handshake, then the transmission phase.
 *
 * <h2>Threads</h2>
 * Everything the client sends is decoded on the server's selector thread ({@link #onSelected}),
 * which answers the handshake itself and turns each transmission request into a {@link Request}
 * submitted to the scheduler as the foreground flow of the connection's volume. A worker runs the
 * request (file IO, copies, checksums) and hands its reply to {@link #send}, which writes it to
 * the non-blocking socket at once if nothing is queued before it; what the socket does not take
 * is queued and written by the selector thread when the socket is writable again. Replies go out
 * in completion order, not request order (NBD matches them by cookie).
 *
 * <h2>Bounded buffering</h2>
 * The selector stops reading from a client, in every state, while it has
 * {@link NbdServer.Limits#maxInFlight} requests unanswered (in flight, or answered with their reply
 * still queued: option replies of the handshake and requests refused at once with an error count
 * the same), or {@link NbdServer.Limits#maxBufferedBytes} of request payloads and replies not yet
 * written; TCP then pushes back on the client. A client that reads none of its replies is thus
 * read no more, and dropped after the write-stall timeout. It also stops when the pool's
 * node-wide budget has no room for the next write payload or read reply ({@link BufferPool#tryAcquire}): the
 * request header is left in the receive buffer and the server calls {@link #memoryAvailable} once
 * buffers are released. A client whose queued replies make no progress for
 * {@link NbdServer.Limits#writeStallNanos} is disconnected. No thread ever blocks on a client.
 *
 * <h2>Errors</h2>
 * A request the protocol lets us refuse gets an error reply (EINVAL, ENOSPC, ENOMEM when the
 * volume's queue is full, ESHUTDOWN when the volume is going away, EIO for a failed file
 * operation, ENOMEM when a worker finds no direct memory for the reply buffer; if not even the
 * error reply's buffer can be had, the connection is closed); a violation that desynchronises
 * the stream (bad magic, unknown client flags, an unknown export named by NBD_OPT_EXPORT_NAME) is
 * a hard disconnect, as the document requires.
 */
final class NbdConnection {

    private static final System.Logger LOG = System.getLogger(NbdConnection.class.getName());

    /**
     * Largest READ or WRITE payload (32 MiB), also advertised as the maximum block size; a read
     * reply (header and payload in one buffer) of this size takes the pool's jumbo class.
     */
    static final int MAX_PAYLOAD = 1 << BufferPool.MAX_SHIFT;
    /** Largest option payload read into memory; a larger option is skipped with NBD_REP_ERR_TOO_BIG. */
    static final int MAX_OPTION_BYTES = 16 << 10;
    /** Size of each connection's receive buffer (direct). */
    static final int READ_BUFFER_BYTES = 64 << 10;
    /** Most extents one block status reply carries. */
    static final int MAX_EXTENTS = 1024;

    /**
     * Where the connection is. OPENING: an NBD_OPT_GO or NBD_OPT_EXPORT_NAME waits for the
     * volume's files to be opened off the selector thread; nothing more is read meanwhile.
     */
    private enum State { CLIENT_FLAGS, OPTION_HEADER, OPTION_DATA, DISCARD, OPENING, REQUEST_HEADER, PAYLOAD, DRAINING, CLOSED }

    private final NbdServer server;
    private final SocketChannel channel;
    private final BufferPool pool;
    private SelectionKey key;
    private final ByteBuffer in = ByteBuffer.allocateDirect(READ_BUFFER_BYTES).order(ByteOrder.BIG_ENDIAN);

    // handshake state (selector thread)
    private volatile State state = State.CLIENT_FLAGS;
    private boolean noZeroes;
    private boolean structured;
    private String metaContextExport;
    private int option;
    private int optionLength;
    private long discardRemaining;
    private Request discarded;

    /** When the connection was accepted (the handshake timeout counts from here). */
    private final long acceptedAt = System.nanoTime();
    /** The client's address: the server caps connections per source. */
    final java.net.InetAddress source;
    /** When bytes last arrived or a request was last answered: idle time counts from here. */
    private volatile long lastActivityAt = acceptedAt;
    /**
     * When the request now arriving began to (its header, then a write's payload), or 0 when none
     * is half received; the request timeout counts from here while the node is reading (selector thread).
     */
    private long requestBegunAt;
    /** The volume attached while its files are opened (OPENING), else null. */
    private VolumeStore opening;

    // transmission state
    private volatile VolumeStore volume;
    private long exportSize;
    private boolean metaContext;
    private Request payloadRequest;
    private volatile boolean readPaused;
    /** Reading stopped until the pool's budget has room for the next write payload or read reply (selector thread). */
    private boolean memoryWait;

    // shared with workers
    private final AtomicInteger inFlight = new AtomicInteger();
    private final AtomicLong buffered = new AtomicLong();
    private final ArrayDeque<ByteBuffer> out = new ArrayDeque<>();
    /** Replies in {@link #out}: written under its lock, read without it. */
    private volatile int queuedReplies;
    private boolean writeInterest;
    private long lastWriteProgress;
    private volatile boolean closed;
    private volatile boolean resumeQueued;

    NbdConnection(NbdServer server, SocketChannel channel, java.net.InetAddress source) {
        this.server = server;
        this.channel = channel;
        this.pool = server.pool;
        this.source = source;
    }

    /** Sends the greeting. Selector thread. */
    void start(SelectionKey k) {
        this.key = k;
        ByteBuffer b = pool.acquire(18);
        b.putLong(Nbd.NBDMAGIC).putLong(Nbd.IHAVEOPT).putShort((short) (Nbd.FLAG_FIXED_NEWSTYLE | Nbd.FLAG_NO_ZEROES)).flip();
        send(b);
    }

    /** The volume once in transmission, else null. */
    VolumeStore volume() {
        return volume;
    }

    // --- input (selector thread) -------------------------------------------------------------------

    void onSelected(SelectionKey k) {
        try {
            if (!k.isValid()) {
                abort("key cancelled");
                return;
            }
            if (k.isWritable()) {
                flushQueued();
            }
            if (k.isValid() && k.isReadable()) {
                readAndProcess();
            }
        } catch (IOException e) {
            abort(e.getMessage());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "NBD connection failed", e);
            abort(e.toString());
        }
    }

    private void readAndProcess() throws IOException {
        if (state == State.PAYLOAD) {
            int n = channel.read(payloadRequest.payload);
            if (n < 0) {
                abort("client closed the connection");
                return;
            }
            if (n > 0) {
                lastActivityAt = System.nanoTime();
            }
            if (payloadRequest.payload.hasRemaining()) {
                return;
            }
            Request r = payloadRequest;
            payloadRequest = null;
            requestBegunAt = 0;
            state = State.REQUEST_HEADER;
            r.payload.flip();
            dispatch(r);
        }
        if (state == State.CLOSED || state == State.DRAINING || readPaused) {
            return;
        }
        int n = channel.read(in);
        if (n < 0) {
            // the client went away: in-flight requests still complete, then the connection closes
            shutdown("client closed the connection");
            return;
        }
        if (n > 0) {
            lastActivityAt = System.nanoTime();
        }
        process();
    }

    /** Decodes what {@link #in} holds. */
    private void process() throws IOException {
        in.flip();
        try {
            while (state != State.CLOSED && state != State.DRAINING && state != State.PAYLOAD && state != State.OPENING
                    && !readPaused) {
                if (atBounds()) {
                    // option replies and error replies count too: a client that reads none is read no more
                    pauseReading();
                    break;
                }
                if (!step()) {
                    break;
                }
            }
        } finally {
            in.compact();
            // a request half received (the rest of a header waits in the buffer, or a payload) began now, if not before
            boolean partial = state == State.PAYLOAD || state == State.REQUEST_HEADER && in.position() > 0;
            if (!partial) {
                requestBegunAt = 0;
            } else if (requestBegunAt == 0) {
                requestBegunAt = System.nanoTime();
            }
        }
    }

    /** Decodes one unit from {@link #in} (in read mode); false if more bytes are needed. */
    private boolean step() throws IOException {
        switch (state) {
            case CLIENT_FLAGS -> {
                if (in.remaining() < 4) {
                    return false;
                }
                int flags = in.getInt();
                if ((flags & ~(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES)) != 0) {
                    abort("client set unknown flags " + Integer.toHexString(flags));
                    return false;
                }
                noZeroes = (flags & Nbd.FLAG_C_NO_ZEROES) != 0;
                state = State.OPTION_HEADER;
                return true;
            }
            case OPTION_HEADER -> {
                if (in.remaining() < 16) {
                    return false;
                }
                if (in.getLong() != Nbd.IHAVEOPT) {
                    abort("bad option magic");
                    return false;
                }
                option = in.getInt();
                long len = Integer.toUnsignedLong(in.getInt());
                if (len > MAX_OPTION_BYTES) {
                    if (option == Nbd.OPT_EXPORT_NAME) {
                        abort("export name too long");
                        return false;
                    }
                    discardRemaining = len;
                    discarded = null;
                    state = State.DISCARD;
                    return true;
                }
                optionLength = (int) len;
                state = State.OPTION_DATA;
                return true;
            }
            case OPTION_DATA -> {
                if (in.remaining() < optionLength) {
                    return false;
                }
                int end = in.position() + optionLength;
                ByteBuffer data = in.slice(in.position(), optionLength).order(ByteOrder.BIG_ENDIAN);
                in.position(end);
                state = State.OPTION_HEADER;
                handleOption(option, data);
                return true;
            }
            case DISCARD -> {
                int n = (int) Math.min(discardRemaining, in.remaining());
                in.position(in.position() + n);
                discardRemaining -= n;
                if (discardRemaining > 0) {
                    return false;
                }
                if (discarded != null) {
                    Request r = discarded;
                    discarded = null;
                    state = State.REQUEST_HEADER;
                    r.replyError(Nbd.EINVAL, "request larger than the maximum payload of " + MAX_PAYLOAD + " bytes");
                } else {
                    state = State.OPTION_HEADER;
                    optionReply(option, Nbd.REP_ERR_TOO_BIG, "option too large");
                }
                return true;
            }
            case REQUEST_HEADER -> {
                if (in.remaining() < Nbd.REQUEST_HEADER_BYTES) {
                    return false;
                }
                return request();
            }
            default -> {
                return false;
            }
        }
    }

    // --- options -------------------------------------------------------------------------------

    private void handleOption(int opt, ByteBuffer data) throws IOException {
        switch (opt) {
            case Nbd.OPT_EXPORT_NAME -> exportName(data);
            case Nbd.OPT_ABORT -> {
                optionReply(opt, Nbd.REP_ACK, null);
                drain();
            }
            case Nbd.OPT_LIST -> {
                if (data.hasRemaining()) {
                    optionReply(opt, Nbd.REP_ERR_INVALID, "NBD_OPT_LIST takes no data");
                    return;
                }
                for (VolumeStore v : server.exports.all()) {
                    byte[] name = v.exportName.getBytes(StandardCharsets.UTF_8);
                    ByteBuffer b = optionReplyBuffer(opt, Nbd.REP_SERVER, 4 + name.length);
                    b.putInt(name.length).put(name).flip();
                    send(b);
                }
                optionReply(opt, Nbd.REP_ACK, null);
            }
            case Nbd.OPT_STARTTLS -> optionReply(opt, Nbd.REP_ERR_UNSUP, "TLS is not supported by this server");
            case Nbd.OPT_INFO, Nbd.OPT_GO -> infoOrGo(opt, data);
            case Nbd.OPT_STRUCTURED_REPLY -> {
                if (data.hasRemaining()) {
                    optionReply(opt, Nbd.REP_ERR_INVALID, "NBD_OPT_STRUCTURED_REPLY takes no data");
                    return;
                }
                structured = true;
                optionReply(opt, Nbd.REP_ACK, null);
            }
            case Nbd.OPT_LIST_META_CONTEXT, Nbd.OPT_SET_META_CONTEXT -> metaContext(opt, data);
            default -> optionReply(opt, Nbd.REP_ERR_UNSUP, "option " + opt + " is not supported");
        }
    }

    private void exportName(ByteBuffer data) {
        String name = string(data, data.remaining());
        VolumeStore v = name == null ? null : server.exports.lookup(name);
        if (v == null) {
            // NBD_OPT_EXPORT_NAME cannot fail politely: the document requires a disconnect
            abort("unknown export '" + name + "'");
            return;
        }
        enterTransmission(v, entered -> {
            if (!entered) {
                abort("export '" + name + "' cannot be opened");
                return;
            }
            metaContext = metaContext && name.equals(metaContextExport);
            exportNameReply();
        });
    }

    private void exportNameReply() {
        ByteBuffer b = pool.acquire(10 + 124);
        b.putLong(exportSize).putShort((short) transmissionFlags());
        if (!noZeroes) {
            for (int i = 0; i < 124; i++) {
                b.put((byte) 0);
            }
        }
        b.flip();
        send(b);
    }

    private void infoOrGo(int opt, ByteBuffer data) throws IOException {
        String name = exportNameField(opt, data, 2);
        if (name == null) {
            return;
        }
        int requests = Short.toUnsignedInt(data.getShort());
        if (data.remaining() != requests * 2) {
            optionReply(opt, Nbd.REP_ERR_INVALID, "information request count does not match the option length");
            return;
        }
        boolean wantName = false;
        boolean wantBlockSize = false;
        for (int i = 0; i < requests; i++) {
            int info = Short.toUnsignedInt(data.getShort());
            wantName |= info == Nbd.INFO_NAME;
            wantBlockSize |= info == Nbd.INFO_BLOCK_SIZE;
        }
        VolumeStore v = server.exports.lookup(name);
        if (v == null) {
            optionReply(opt, Nbd.REP_ERR_UNKNOWN, "unknown export '" + name + "': this node serves "
                    + server.exports.all().size() + " exports, named tenant/volume");
            return;
        }
        if (opt == Nbd.OPT_GO) {
            // Enter first: a GO that fails gets its error alone, no NBD_REP_INFO before it.
            boolean meta = metaContext && name.equals(metaContextExport);
            boolean infoName = wantName;
            boolean infoBlockSize = wantBlockSize;
            enterTransmission(v, entered -> {
                if (!entered) {
                    optionReply(opt, Nbd.REP_ERR_UNKNOWN, "export '" + name + "' is being removed or cannot be opened");
                    return;
                }
                infoReplies(opt, name, exportSize, infoName, infoBlockSize);
                metaContext = meta;
                optionReply(opt, Nbd.REP_ACK, null);
            });
            return;
        }
        infoReplies(opt, name, v.size(), wantName, wantBlockSize);
        optionReply(opt, Nbd.REP_ACK, null);
    }

    /** The NBD_REP_INFO replies of a GO or INFO: the name and block sizes if asked, the size and flags always. */
    private void infoReplies(int opt, String name, long size, boolean wantName, boolean wantBlockSize) {
        if (wantName) {
            byte[] n = name.getBytes(StandardCharsets.UTF_8);
            ByteBuffer b = optionReplyBuffer(opt, Nbd.REP_INFO, 2 + n.length);
            b.putShort((short) Nbd.INFO_NAME).put(n).flip();
            send(b);
        }
        if (wantBlockSize) {
            ByteBuffer b = optionReplyBuffer(opt, Nbd.REP_INFO, 14);
            b.putShort((short) Nbd.INFO_BLOCK_SIZE).putInt(1).putInt(VolumeStore.BLOCK).putInt(MAX_PAYLOAD).flip();
            send(b);
        }
        ByteBuffer b = optionReplyBuffer(opt, Nbd.REP_INFO, 12);
        b.putShort((short) Nbd.INFO_EXPORT).putLong(size).putShort((short) transmissionFlags()).flip();
        send(b);
    }

    private void metaContext(int opt, ByteBuffer data) throws IOException {
        if (opt == Nbd.OPT_SET_META_CONTEXT) {
            // replaces every context set before, also when it fails (the protocol document)
            metaContext = false;
            metaContextExport = null;
        }
        if (!structured) {
            optionReply(opt, Nbd.REP_ERR_INVALID, "negotiate NBD_OPT_STRUCTURED_REPLY first");
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
                optionReply(opt, Nbd.REP_ERR_INVALID, "query count exceeds the option");
                return;
            }
            long len = Integer.toUnsignedLong(data.getInt());
            if (len > data.remaining()) {
                optionReply(opt, Nbd.REP_ERR_INVALID, "query length exceeds the option");
                return;
            }
            String q = string(data, (int) len);
            if (q == null) {
                optionReply(opt, Nbd.REP_ERR_INVALID, "query is not valid UTF-8");
                return;
            }
            queries.add(q);
        }
        if (data.hasRemaining()) {
            optionReply(opt, Nbd.REP_ERR_INVALID, "option length does not match its contents");
            return;
        }
        if (server.exports.lookup(name) == null) {
            optionReply(opt, Nbd.REP_ERR_UNKNOWN, "unknown export '" + name + "'");
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
            ByteBuffer b = optionReplyBuffer(opt, Nbd.REP_META_CONTEXT, 4 + n.length);
            b.putInt(opt == Nbd.OPT_SET_META_CONTEXT ? Nbd.BASE_ALLOCATION_ID : 0).put(n).flip();
            send(b);
        }
        optionReply(opt, Nbd.REP_ACK, null);
    }

    /**
     * Selector thread: attaches to {@code v} and enters transmission, then calls {@code then}
     * (on the selector thread) with whether it did. If the volume's files are not open yet, they
     * are opened on the server's opener thread, never here (a slow disk would hold up every
     * client): the connection reads nothing meanwhile and {@code then} runs when the open is done.
     */
    private void enterTransmission(VolumeStore v, java.util.function.Consumer<Boolean> then) {
        if (!v.attach(this)) {
            then.accept(false);
            return;
        }
        if (v.isOpen()) {
            entered(v);
            then.accept(true);
            return;
        }
        opening = v;
        state = State.OPENING;
        pauseReading();
        server.openFiles(this, v, failure -> {
            if (state != State.OPENING) {
                return; // closed meanwhile; abort() has detached it
            }
            opening = null;
            if (failure != null) {
                v.detach(this);
                LOG.log(Level.WARNING, "opening volume " + v.exportName + ": " + failure);
                state = State.OPTION_HEADER;
                then.accept(false);
            } else {
                entered(v);
                then.accept(true);
            }
            resumeReading();
        });
    }

    private void entered(VolumeStore v) {
        volume = v;
        exportSize = v.size();
        state = State.REQUEST_HEADER;
    }

    private int transmissionFlags() {
        return Nbd.FLAG_HAS_FLAGS | Nbd.FLAG_SEND_FLUSH | Nbd.FLAG_SEND_FUA | Nbd.FLAG_SEND_TRIM
                | Nbd.FLAG_SEND_WRITE_ZEROES | Nbd.FLAG_CAN_MULTI_CONN | Nbd.FLAG_SEND_CACHE
                | (structured ? Nbd.FLAG_SEND_DF : 0);
    }

    private ByteBuffer optionReplyBuffer(int opt, int type, int length) {
        ByteBuffer b = pool.acquire(20 + length);
        b.putLong(Nbd.OPTION_REPLY_MAGIC).putInt(opt).putInt(type).putInt(length);
        return b;
    }

    private void optionReply(int opt, int type, String message) {
        byte[] m = message == null ? new byte[0] : message.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = optionReplyBuffer(opt, type, m.length);
        b.put(m).flip();
        send(b);
    }

    /**
     * The one parser of the export name that NBD_OPT_INFO, NBD_OPT_GO and the meta context options
     * start with: a 32-bit length and that many bytes of UTF-8, with at least {@code after} bytes
     * of the option left behind it. Answers NBD_REP_ERR_INVALID and returns null if it is not.
     */
    private String exportNameField(int opt, ByteBuffer data, int after) {
        if (data.remaining() < 4 + after) {
            optionReply(opt, Nbd.REP_ERR_INVALID, "option data too short");
            return null;
        }
        long nameLen = Integer.toUnsignedLong(data.getInt());
        if (nameLen > data.remaining() - after) {
            optionReply(opt, Nbd.REP_ERR_INVALID, "export name length exceeds the option");
            return null;
        }
        String name = string(data, (int) nameLen);
        if (name == null) {
            optionReply(opt, Nbd.REP_ERR_INVALID, "export name is not valid UTF-8 or longer than 4096 bytes");
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

    // --- transmission requests (selector thread) ------------------------------------------------

    /** Decodes one request header from {@link #in}; false if decoding must stop. */
    private boolean request() {
        if (in.getInt() != Nbd.REQUEST_MAGIC) {
            abort("bad request magic");
            return false;
        }
        int flags = Short.toUnsignedInt(in.getShort());
        int type = Short.toUnsignedInt(in.getShort());
        long cookie = in.getLong();
        long offset = in.getLong();
        long length = Integer.toUnsignedLong(in.getInt());
        requestBegunAt = 0; // its header has arrived; a payload counts on its own
        Request r = new Request(this, type, flags, cookie, offset, length);
        if (type == Nbd.CMD_WRITE) {
            if (length > MAX_PAYLOAD) {
                // the payload still follows: skip it, then refuse
                discardRemaining = length;
                discarded = r;
                state = State.DISCARD;
                return true;
            }
            r.payload = pool.tryAcquire((int) length);
            if (r.payload == null) {
                return awaitBudget();
            }
            int n = Math.min(in.remaining(), (int) length);
            int lim = in.limit();
            in.limit(in.position() + n);
            r.payload.put(in);
            in.limit(lim);
            if (r.payload.hasRemaining()) {
                payloadRequest = r;
                state = State.PAYLOAD;
                return false;
            }
            r.payload.flip();
        }
        if (type == Nbd.CMD_READ && validate(r) == 0) {
            // the reply buffer is taken here, within the node's budget, as a write's payload is
            try {
                r.payload = pool.tryAcquire(replyHeaderBytes() + (int) length);
            } catch (OutOfMemoryError e) {
                if (!OutOfMemory.isDirect(e)) {
                    throw e;
                }
                r.replyError(Nbd.ENOMEM, "out of memory: " + e.getMessage());
                return true;
            }
            if (r.payload == null) {
                return awaitBudget();
            }
        }
        if (type == Nbd.CMD_DISC) {
            r.release();
            drain();
            return false;
        }
        dispatch(r);
        return true;
    }

    /**
     * No room in the node's buffer budget for the request whose header was just decoded: keeps
     * the header in {@link #in} and reads nothing more until buffers are released. Returns false.
     */
    private boolean awaitBudget() {
        in.position(in.position() - Nbd.REQUEST_HEADER_BYTES);
        memoryWait = true;
        pauseReading();
        server.awaitMemory(this);
        return false;
    }

    /** Bytes in front of a READ's data in its reply. */
    private int replyHeaderBytes() {
        return structured ? Nbd.CHUNK_HEADER_BYTES + 8 : Nbd.SIMPLE_REPLY_BYTES;
    }

    /** Validates and submits a decoded request, or answers it with an error at once. */
    private void dispatch(Request r) {
        int error = validate(r);
        if (error != 0) {
            r.release();
            r.replyError(error, errorMessage(error, r));
            return;
        }
        inFlight.incrementAndGet();
        buffered.addAndGet(r.bufferedBytes());
        try {
            if (server.bypass != null) {
                server.bypass.execute(r::call);
            } else {
                server.executor.submit(volume.id, r.kind(), r.cost(), r).whenComplete(r);
            }
        } catch (QueueFullException e) {
            r.release();
            r.replyError(Nbd.ENOMEM, "volume queue full; retry later");
            r.done();
        } catch (IllegalArgumentException | RejectedExecutionException e) {
            r.release();
            r.replyError(Nbd.ESHUTDOWN, "volume is being removed");
            r.done();
        }
        if (atBounds()) {
            pauseReading();
        }
    }

    /**
     * Whether the connection is at its bounds, so that nothing more is read from it: requests
     * not yet answered to the client (in flight, or answered and their reply still queued, which
     * covers option replies and requests answered at once with an error) reach the in-flight
     * limit, or payloads and unwritten replies reach the byte limit.
     */
    private boolean atBounds() {
        return inFlight.get() + queuedReplies >= server.limits.maxInFlight()
                || buffered.get() >= server.limits.maxBufferedBytes();
    }

    private int validate(Request r) {
        long end = r.offset + r.length;
        boolean inRange = r.offset >= 0 && end >= r.offset && end <= exportSize;
        return switch (r.type) {
            case Nbd.CMD_READ -> (r.flags & ~(Nbd.CMD_FLAG_FUA | Nbd.CMD_FLAG_DF)) != 0 || r.length == 0 || !inRange
                    || (r.flags & Nbd.CMD_FLAG_DF) != 0 && !structured ? Nbd.EINVAL
                    : r.length > MAX_PAYLOAD ? Nbd.EINVAL : 0;
            case Nbd.CMD_WRITE -> (r.flags & ~Nbd.CMD_FLAG_FUA) != 0 || r.length == 0 ? Nbd.EINVAL
                    : !inRange ? Nbd.ENOSPC : 0;
            case Nbd.CMD_WRITE_ZEROES -> (r.flags & ~(Nbd.CMD_FLAG_FUA | Nbd.CMD_FLAG_NO_HOLE)) != 0 || r.length == 0
                    ? Nbd.EINVAL : !inRange ? Nbd.ENOSPC : 0;
            case Nbd.CMD_TRIM -> (r.flags & ~Nbd.CMD_FLAG_FUA) != 0 || r.length == 0 || !inRange ? Nbd.EINVAL : 0;
            case Nbd.CMD_FLUSH -> (r.flags & ~Nbd.CMD_FLAG_FUA) != 0 ? Nbd.EINVAL : 0;
            case Nbd.CMD_CACHE -> (r.flags & ~Nbd.CMD_FLAG_FUA) != 0 || r.length == 0 || !inRange ? Nbd.EINVAL : 0;
            case Nbd.CMD_BLOCK_STATUS -> !metaContext || (r.flags & ~(Nbd.CMD_FLAG_FUA | Nbd.CMD_FLAG_REQ_ONE)) != 0
                    || r.length == 0 || !inRange ? Nbd.EINVAL : 0;
            default -> Nbd.EINVAL;
        };
    }

    private String errorMessage(int error, Request r) {
        if (r.type > Nbd.CMD_BLOCK_STATUS) {
            return "unknown command " + r.type;
        }
        if (r.type == Nbd.CMD_BLOCK_STATUS && !metaContext) {
            return "no metadata context was negotiated";
        }
        return error == Nbd.ENOSPC ? "write beyond the end of the export (" + exportSize + " bytes)"
                : "invalid request: flags 0x" + Integer.toHexString(r.flags) + ", offset " + r.offset
                        + ", length " + r.length + ", export size " + exportSize;
    }

    private void pauseReading() {
        if (!readPaused) {
            readPaused = true;
            if (key.isValid()) {
                key.interestOps(key.interestOps() & ~SelectionKey.OP_READ);
            }
        }
    }

    /** Selector thread: buffers were released while this connection waited for the budget; try again. */
    void memoryAvailable() {
        memoryWait = false;
        resumeReading();
    }

    /** Selector thread: reads again once below the bounds. */
    private void resumeReading() {
        resumeQueued = false;
        if (!readPaused || closed || state == State.DRAINING) {
            maybeFinishDrain();
            return;
        }
        if (memoryWait || state == State.OPENING) {
            return; // the server calls memoryAvailable once buffers are released; the open, its callback
        }
        if (atBounds()) {
            return; // the last reply written, or enough requests done, tries again
        }
        readPaused = false;
        if (requestBegunAt != 0) {
            requestBegunAt = System.nanoTime(); // the node was not reading: the client's time starts again
        }
        if (key.isValid()) {
            key.interestOps(key.interestOps() | SelectionKey.OP_READ);
        }
        try {
            process(); // requests already buffered
        } catch (IOException e) {
            abort(e.getMessage());
        }
    }

    /** Worker: one request fully answered. */
    private void requestDone(long bytes) {
        lastActivityAt = System.nanoTime();
        int n = inFlight.decrementAndGet();
        long b = buffered.addAndGet(-bytes);
        if (state == State.DRAINING && n == 0 || readPaused && !resumeQueued
                && n + queuedReplies < server.limits.maxInFlight() / 2 + 1 && b < server.limits.maxBufferedBytes() / 2 + 1) {
            resumeQueued = true;
            server.execute(this, this::resumeReading);
        }
    }

    // --- output (any thread) -----------------------------------------------------------------------

    /**
     * Writes {@code b} (position to limit) and returns it to the pool once written: at once if
     * nothing is queued and the socket takes it, else after the queued replies, from the selector
     * thread. Never blocks.
     */
    void send(ByteBuffer b) {
        boolean wake = false;
        synchronized (out) {
            if (closed) {
                pool.release(b);
                return;
            }
            if (out.isEmpty()) {
                try {
                    channel.write(b);
                } catch (IOException e) {
                    pool.release(b);
                    closeFromAnyThread("write failed: " + e.getMessage());
                    return;
                }
                if (!b.hasRemaining()) {
                    pool.release(b);
                    return;
                }
                lastWriteProgress = System.nanoTime();
            }
            out.add(b);
            queuedReplies = out.size();
            server.noteQueuedReplies(queuedReplies);
            buffered.addAndGet(b.remaining());
            if (!writeInterest) {
                writeInterest = true;
                wake = true;
            }
        }
        if (wake) {
            if (server.inSelectorThread()) {
                enableWrite();
            } else {
                server.execute(this, this::enableWrite);
            }
        }
    }

    private void enableWrite() {
        if (key.isValid()) {
            key.interestOps(key.interestOps() | SelectionKey.OP_WRITE);
        }
    }

    /** Selector thread: writes queued replies while the socket takes them. */
    private void flushQueued() throws IOException {
        boolean empty;
        synchronized (out) {
            ByteBuffer b;
            while ((b = out.peek()) != null) {
                int before = b.remaining();
                channel.write(b);
                int written = before - b.remaining();
                if (written > 0) {
                    buffered.addAndGet(-written);
                    lastWriteProgress = System.nanoTime();
                }
                if (b.hasRemaining()) {
                    break;
                }
                out.poll();
                pool.release(b);
            }
            queuedReplies = out.size();
            empty = out.isEmpty();
            if (empty) {
                writeInterest = false;
                key.interestOps(key.interestOps() & ~SelectionKey.OP_WRITE);
            }
        }
        if (readPaused && (empty || queuedReplies < server.limits.maxInFlight() / 2 + 1)) {
            resumeReading();
        } else if (empty) {
            maybeFinishDrain();
        }
    }

    /**
     * Selector thread: drops a client that has not taken any reply bytes for too long, or that
     * has not entered transmission within the handshake timeout.
     */
    void checkStalled(long now) {
        if (volume == null && state != State.CLOSED && state != State.DRAINING
                && now - acceptedAt > server.limits.handshakeNanos()) {
            abort("handshake not finished within " + server.limits.handshakeNanos() / 1_000_000 + " ms");
            return;
        }
        if (requestBegunAt != 0 && !readPaused && (state == State.REQUEST_HEADER || state == State.PAYLOAD)
                && now - requestBegunAt > server.limits.requestNanos()) {
            abort("request not received within " + server.limits.requestNanos() / 1_000_000 + " ms of its first byte");
            return;
        }
        boolean stalled;
        synchronized (out) {
            stalled = !out.isEmpty() && now - lastWriteProgress > server.limits.writeStallNanos();
        }
        if (stalled) {
            abort("client stopped reading replies");
        }
    }

    /**
     * Selector thread: how long the connection has been idle, or -1 if it is not: idle is in
     * transmission with nothing in flight, nothing unsent and nothing half received.
     */
    long idleNanos(long now) {
        if (volume == null || state != State.REQUEST_HEADER || readPaused || inFlight.get() > 0 || queuedReplies > 0
                || in.position() > 0) {
            return -1;
        }
        return now - lastActivityAt;
    }

    // --- closing --------------------------------------------------------------------------------

    /** Selector thread: stop reading; close once every in-flight request is answered and written. */
    void shutdown(String why) {
        if (state == State.CLOSED) {
            return;
        }
        if (state == State.PAYLOAD && payloadRequest != null) {
            payloadRequest.release();
            payloadRequest = null;
        }
        LOG.log(Level.DEBUG, "NBD connection draining: {0}", why);
        drain();
    }

    /**
     * Selector thread: reads nothing more; closes once every in-flight request is answered and
     * written. Read interest goes too: a client's end of stream (or bytes it still sends) would
     * otherwise keep the key ready, and the selector would spin until the drain ends.
     */
    private void drain() {
        state = State.DRAINING;
        if (key != null && key.isValid()) {
            key.interestOps(key.interestOps() & ~SelectionKey.OP_READ);
        }
        maybeFinishDrain();
    }

    private void maybeFinishDrain() {
        if (state != State.DRAINING) {
            return;
        }
        boolean empty;
        synchronized (out) {
            empty = out.isEmpty();
        }
        if (empty && inFlight.get() == 0) {
            abort(null);
        }
    }

    private void closeFromAnyThread(String why) {
        if (server.inSelectorThread()) {
            abort(why);
        } else {
            server.execute(this, () -> abort(why));
        }
    }

    /** Selector thread: hard disconnect; buffers of requests still in flight are released by their workers. */
    void abort(String why) {
        if (state == State.CLOSED) {
            return;
        }
        if (why != null) {
            LOG.log(Level.DEBUG, "NBD connection closed: {0}", why);
        }
        state = State.CLOSED;
        if (payloadRequest != null) {
            payloadRequest.release();
            payloadRequest = null;
        }
        synchronized (out) {
            closed = true;
            ByteBuffer b;
            while ((b = out.poll()) != null) {
                pool.release(b);
            }
            queuedReplies = 0;
        }
        if (key != null) {
            key.cancel();
        }
        try {
            channel.close();
        } catch (IOException ignored) {
            // closed anyway
        }
        VolumeStore v = volume;
        if (v != null) {
            v.detach(this);
        }
        VolumeStore o = opening;
        if (o != null) {
            opening = null;
            o.detach(this);
        }
        server.forget(this);
    }

    boolean isClosed() {
        return closed;
    }

    // --- a request ------------------------------------------------------------------------------

    /**
     * One transmission request: decoded on the selector thread, run by a scheduler worker, which
     * sends its reply. Also the completion callback of its scheduler future, which answers the
     * request if the scheduler failed it without running it (volume removed meanwhile).
     */
    static final class Request implements Callable<Void>, BiConsumer<Void, Throwable> {
        final NbdConnection conn;
        final int type;
        final int flags;
        final long cookie;
        final long offset;
        final long length;
        ByteBuffer payload;
        private boolean ran;

        Request(NbdConnection conn, int type, int flags, long cookie, long offset, long length) {
            this.conn = conn;
            this.type = type;
            this.flags = flags;
            this.cookie = cookie;
            this.offset = offset;
            this.length = length;
        }

        IoKind kind() {
            return type == Nbd.CMD_READ || type == Nbd.CMD_BLOCK_STATUS || type == Nbd.CMD_CACHE ? IoKind.READ : IoKind.WRITE;
        }

        /**
         * The scheduler cost: the bytes the request moves through the volume's file, whether or
         * not they cross the wire: READ, WRITE, CACHE (reads its range into the page cache) and
         * WRITE_ZEROES with NO_HOLE (writes its range), up to 4 GiB for the last two; 0 (the
         * cost model's minimum) for the rest, which touch metadata only (FLUSH, TRIM, zeroes
         * that punch a hole, BLOCK_STATUS).
         */
        long cost() {
            if (type == Nbd.CMD_READ || type == Nbd.CMD_WRITE || type == Nbd.CMD_CACHE) {
                return length;
            }
            return type == Nbd.CMD_WRITE_ZEROES && (flags & Nbd.CMD_FLAG_NO_HOLE) != 0 ? length : 0;
        }

        /** Bytes of the request's data, counted against the connection's byte limit while it is in flight. */
        long bufferedBytes() {
            return type == Nbd.CMD_READ || type == Nbd.CMD_WRITE ? length : 0;
        }

        /** Worker thread. */
        @Override
        public Void call() {
            ran = true;
            VolumeStore v = conn.volume;
            try {
                if (conn.closed) {
                    return null; // nobody to answer
                }
                switch (type) {
                    case Nbd.CMD_READ -> read(v);
                    case Nbd.CMD_WRITE -> {
                        v.write(offset, payload, (flags & Nbd.CMD_FLAG_FUA) != 0);
                        replyOk();
                    }
                    case Nbd.CMD_FLUSH -> {
                        v.flush();
                        replyOk();
                    }
                    case Nbd.CMD_TRIM -> {
                        v.trim(offset, length);
                        if ((flags & Nbd.CMD_FLAG_FUA) != 0) {
                            v.flush();
                        }
                        replyOk();
                    }
                    case Nbd.CMD_WRITE_ZEROES -> {
                        v.writeZeroes(offset, length, (flags & Nbd.CMD_FLAG_NO_HOLE) != 0, (flags & Nbd.CMD_FLAG_FUA) != 0);
                        replyOk();
                    }
                    case Nbd.CMD_CACHE -> {
                        cache(v);
                        replyOk();
                    }
                    case Nbd.CMD_BLOCK_STATUS -> blockStatus(v);
                    default -> replyError(Nbd.EINVAL, "unknown command");
                }
            } catch (VolumeClosedException e) {
                replyError(Nbd.ESHUTDOWN, "volume is being removed");
            } catch (IOException | RuntimeException e) {
                replyError(Nbd.EIO, "IO error: " + e.getMessage());
            } catch (OutOfMemoryError e) {
                // no direct memory for the reply buffer: answer anyway, the client must not wait forever
                OutOfMemory.checkFatal(e); // unless it was the heap's
                replyError(Nbd.ENOMEM, "out of memory: " + e.getMessage());
            } finally {
                release();
                done();
            }
            return null;
        }

        /** Scheduler future completed: answers the request if it never ran. */
        @Override
        public void accept(Void ignored, Throwable failure) {
            if (failure != null && !ran) {
                replyError(Nbd.ESHUTDOWN, "volume is being removed");
                release();
                done();
            }
        }

        void done() {
            conn.requestDone(bufferedBytes());
        }

        void release() {
            ByteBuffer p = payload;
            if (p != null) {
                payload = null;
                conn.pool.release(p);
            }
        }

        /** A pooled buffer holding {@code len} bytes read at {@code offset}, after room for a {@code hdr}-byte reply header. */
        private ByteBuffer readBehindHeader(VolumeStore v, int hdr, int len) throws IOException {
            ByteBuffer b = payload; // taken within the budget when the request was decoded
            payload = null;
            if (b == null) {
                b = conn.pool.acquire(hdr + len);
            }
            try {
                b.position(hdr);
                v.read(offset, b);
                return b;
            } catch (IOException | RuntimeException e) {
                conn.pool.release(b);
                throw e;
            }
        }

        private void read(VolumeStore v) throws IOException {
            int len = (int) length;
            if (conn.structured) {
                int hdr = Nbd.CHUNK_HEADER_BYTES + 8;
                ByteBuffer b = readBehindHeader(v, hdr, len);
                b.position(0);
                b.putInt(Nbd.STRUCTURED_REPLY_MAGIC).putShort((short) Nbd.REPLY_FLAG_DONE)
                        .putShort((short) Nbd.REPLY_TYPE_OFFSET_DATA).putLong(cookie).putInt(8 + len).putLong(offset);
                b.position(0).limit(hdr + len);
                conn.send(b);
            } else {
                int hdr = Nbd.SIMPLE_REPLY_BYTES;
                ByteBuffer b = readBehindHeader(v, hdr, len);
                b.position(0);
                b.putInt(Nbd.SIMPLE_REPLY_MAGIC).putInt(0).putLong(cookie);
                b.position(0).limit(hdr + len);
                conn.send(b);
            }
        }

        private void cache(VolumeStore v) throws IOException {
            // read the range through the page cache, 1 MiB at a time
            ByteBuffer b = conn.pool.acquire(1 << 20);
            try {
                for (long p = offset; p < offset + length; p += 1 << 20) {
                    b.clear().limit((int) Math.min(1 << 20, offset + length - p));
                    v.read(p, b);
                }
            } finally {
                conn.pool.release(b);
            }
        }

        private void blockStatus(VolumeStore v) throws IOException {
            int max = (flags & Nbd.CMD_FLAG_REQ_ONE) != 0 ? 1 : MAX_EXTENTS;
            int hdr = Nbd.CHUNK_HEADER_BYTES + 4;
            ByteBuffer b = conn.pool.acquire(hdr + 8 * max);
            int n;
            try {
                b.position(hdr);
                n = v.blockStatus(offset, length, max == 1, b);
            } catch (IOException | RuntimeException e) {
                conn.pool.release(b);
                throw e;
            }
            int len = 4 + 8 * n;
            b.position(0);
            b.putInt(Nbd.STRUCTURED_REPLY_MAGIC).putShort((short) Nbd.REPLY_FLAG_DONE)
                    .putShort((short) Nbd.REPLY_TYPE_BLOCK_STATUS).putLong(cookie).putInt(len).putInt(Nbd.BASE_ALLOCATION_ID);
            b.position(0).limit(Nbd.CHUNK_HEADER_BYTES + len);
            conn.send(b);
        }

        private void replyOk() {
            ByteBuffer b = conn.pool.acquire(Nbd.SIMPLE_REPLY_BYTES);
            b.putInt(Nbd.SIMPLE_REPLY_MAGIC).putInt(0).putLong(cookie).flip();
            conn.send(b);
        }

        /**
         * An error reply: a structured error chunk where structured replies are negotiated (always
         * for READ and BLOCK_STATUS, which must not get a simple reply then), else a simple reply.
         * If not even its buffer can be had (out of direct memory), the connection is closed: the
         * client then sees its requests fail instead of waiting for a reply that never comes.
         */
        void replyError(int error, String message) {
            try {
                sendError(error, message);
            } catch (OutOfMemoryError e) {
                OutOfMemory.checkFatal(e);
                LOG.log(Level.WARNING, "no memory for an NBD error reply; closing the connection: " + e.getMessage());
                conn.closeFromAnyThread("out of memory for an error reply");
            }
        }

        private void sendError(int error, String message) {
            if (conn.structured) {
                byte[] m = message.getBytes(StandardCharsets.UTF_8);
                int mlen = Math.min(m.length, 4096);
                ByteBuffer b = conn.pool.acquire(Nbd.CHUNK_HEADER_BYTES + 6 + mlen);
                b.putInt(Nbd.STRUCTURED_REPLY_MAGIC).putShort((short) Nbd.REPLY_FLAG_DONE)
                        .putShort((short) Nbd.REPLY_TYPE_ERROR).putLong(cookie).putInt(6 + mlen)
                        .putInt(error).putShort((short) mlen).put(m, 0, mlen).flip();
                conn.send(b);
            } else {
                ByteBuffer b = conn.pool.acquire(Nbd.SIMPLE_REPLY_BYTES);
                b.putInt(Nbd.SIMPLE_REPLY_MAGIC).putInt(error).putLong(cookie).flip();
                conn.send(b);
            }
        }
    }
}
