package io.weir.datanode;

import io.weir.scheduler.QueueFullException;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One NBD client connection: its framing, flow control and closing (its output goes through
 * {@link NbdReplies}), through the fixed newstyle handshake (whose options {@link NbdHandshake}
 * answers) and the transmission phase (whose requests {@link NbdRequest} runs and answers).
 *
 * <h2>Threads</h2>
 * Everything the client sends is decoded on the server's selector thread ({@link #onReadable}),
 * which answers the handshake itself and turns each transmission request into a {@link NbdRequest}
 * submitted to the scheduler as the foreground flow of the connection's volume (a restarted primary
 * not yet confirmed holds it first, and whichever thread confirms it submits it). A worker runs the
 * request (file IO, copies, checksums) and hands its reply to {@link #send}, which writes it to
 * the non-blocking socket at once if nothing is queued before it; what the socket does not take
 * is queued and written by the selector thread when the socket is writable again (the
 * connection's {@link NbdReplies}). A worker running a batch of requests holds their replies for
 * a moment and writes each connection's in one gathering write ({@link ReplyBatch},
 * {@link #sendNow}). Replies go out in completion order, not request order (NBD matches them by
 * cookie).
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
 * <h2>TLS</h2>
 * Every byte goes through the connection's {@link NbdTransport}: the socket in clear, and after
 * NBD_OPT_STARTTLS ({@link NbdTlsPeer#start}) a tls-channel session over the same socket, still
 * non-blocking on the same selector. The connection sees TLS in three places: a read that needs
 * the socket to be writable first (the handshake) is retried on OP_WRITE, a TLS session may hold
 * decrypted bytes that no OP_READ announces (so the connection reads on while a read gives some,
 * in the selector's next round past a receive buffer's worth), and a reply
 * stays queued until its last record is on the socket. Replies are wrapped in the order they are
 * written, under the output lock (that of {@link NbdReplies}), the replies a worker's batch held
 * together into as few records as they fill.
 *
 * <h2>Errors</h2>
 * A request the protocol lets us refuse gets an error reply (EINVAL, ENOSPC, ENOMEM when the
 * volume's queue is full, ESHUTDOWN when the volume is going away, EIO for a failed file
 * operation, ENOMEM when a worker finds no direct memory for the reply buffer; if not even the
 * error reply's buffer can be had, the connection is closed); a violation that desynchronises
 * the stream (bad magic, unknown client flags, an unknown export named by NBD_OPT_EXPORT_NAME) is
 * a hard disconnect, as the document requires.
 */
final class NbdConnection implements ReplyBatch.Sink {

    private static final System.Logger LOG = System.getLogger(NbdConnection.class.getName());

    /**
     * Largest READ or WRITE payload (32 MiB), also advertised as the maximum block size; a read
     * reply (header and payload in one buffer) of this size takes the pool's largest class.
     */
    static final int MAX_PAYLOAD = 1 << BufferPool.MAX_SHIFT;
    /** Size of each connection's receive buffer (direct). */
    static final int READ_BUFFER_BYTES = 64 << 10;
    /**
     * Write payloads from this size on are read from the socket into their own buffer: after such
     * a write the receive buffer takes one request header at a time. Below it a read call that
     * brings several requests is worth more than the copies of their payloads; the value is a
     * judgement, not a measured break-even.
     */
    static final int DIRECT_PAYLOAD_BYTES = 16 << 10;
    /** Most extents one block status reply carries. */
    static final int MAX_EXTENTS = 1024;

    /**
     * Where the connection is. OPTIONS: the handshake, whose bytes {@link NbdHandshake} frames.
     * OPENING: an NBD_OPT_GO or NBD_OPT_EXPORT_NAME waits for the volume's files to be opened off
     * the selector thread; nothing more is read meanwhile. DISCARD: a write above
     * {@link #MAX_PAYLOAD} is read and dropped before it is refused.
     */
    private enum State { OPTIONS, DISCARD, OPENING, REQUEST_HEADER, PAYLOAD, DRAINING, CLOSED }

    final NbdServer server;
    /** The socket, or the TLS session over it after NBD_OPT_STARTTLS: all IO goes through it. */
    private final NbdTransport transport;
    /** The client as TLS knows it: STARTTLS, its certificate's tenant, revocation. */
    final NbdTlsPeer tls;
    final BufferPool pool;
    private SelectionKey key;
    private final ByteBuffer in = ByteBuffer.allocateDirect(READ_BUFFER_BYTES).order(ByteOrder.BIG_ENDIAN);

    // handshake state (selector thread)
    private volatile State state = State.OPTIONS;
    /** The handshake, and what it negotiated. */
    private final NbdHandshake options = new NbdHandshake(this);
    /** What is left to read of an oversized write ({@code discarded}) before it is refused. */
    private long discardRemaining;
    private NbdRequest discarded;

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
    private NbdRequest payloadRequest;
    /**
     * The last request decoded was a write of at least {@link #DIRECT_PAYLOAD_BYTES}: the next
     * read into {@link #in} takes only a request header, so that the next payload of a stream of
     * large writes goes straight from the socket into its own buffer rather than through
     * {@link #in} and a copy (selector thread).
     */
    private boolean largeWrites;
    private volatile boolean readPaused;
    /** Reading stopped until the pool's budget has room for the next write payload or read reply (selector thread). */
    private boolean memoryWait;

    // shared with workers
    private final AtomicInteger inFlight = new AtomicInteger();
    /** Bytes of write payloads held and of replies not yet written: the byte bound. */
    private final AtomicLong buffered = new AtomicLong();
    private final NbdReplies replies;
    private volatile boolean resumeQueued;

    NbdConnection(NbdServer server, SocketChannel channel, java.net.InetAddress source) {
        this.server = server;
        this.transport = new NbdTransport(channel);
        this.pool = server.pool;
        this.source = source;
        this.replies = new NbdReplies(server, transport, buffered);
        this.tls = new NbdTlsPeer(this, server, transport, replies, in);
    }

    /** Sends the greeting. Selector thread. */
    void start(SelectionKey k) {
        this.key = k;
        options.greet();
    }

    /** The volume once in transmission, else null. */
    VolumeStore volume() {
        return volume;
    }

    // --- input (selector thread) -------------------------------------------------------------------

    /**
     * The socket is readable: reads and decodes what it holds. The server calls this for every
     * selected connection before it writes to any ({@link #onWritable}), so that a client's next
     * request waits for no other client's replies.
     */
    void onReadable(SelectionKey k) {
        guarded(() -> {
            if (!k.isValid()) {
                abort("key cancelled");
            } else if (k.isReadable()) {
                readAndProcess();
            }
        });
    }

    /**
     * The socket is writable: writes queued replies, within the round's budget
     * ({@link NbdServer#takeWriteBudget}), and retries a TLS read that had to write first.
     */
    void onWritable(SelectionKey k) {
        guarded(() -> {
            if (!k.isValid()) {
                return;
            }
            boolean readAgain = transport.takeReadWantsWrite();
            if (readAgain) {
                readWaitsForWrite = false;
                if (!readPaused && state != State.DRAINING) { // a draining connection reads nothing: it would spin
                    k.interestOps(k.interestOps() | SelectionKey.OP_READ);
                }
            }
            flushQueued();
            if (k.isValid() && readAgain) {
                readAndProcess();
            }
        });
    }

    private interface IoAction {
        void run() throws IOException;
    }

    private void guarded(IoAction action) {
        try {
            action.run();
        } catch (IOException e) {
            abort(e.getMessage());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "NBD connection failed", e);
            abort(e.toString());
        }
    }

    /**
     * Reads and decodes what the socket announced. A TLS session may hold decrypted bytes the
     * socket will not announce again, so over TLS it reads on while the session gives some and
     * the connection reads at all, up to {@link #READ_BUFFER_BYTES} in this round (a receive
     * buffer's worth, what one read takes in clear); past it, the connection reads on in the next
     * round, after the others had theirs ({@link NbdServer#readOnNextRound}). Without that bound a
     * client sending options or refused requests faster than they were answered, and reading every
     * answer so that no limit paused it, kept the selector thread to itself: nobody else was
     * read, written or greeted.
     */
    private void readAndProcess() throws IOException {
        long taken;
        long round = 0;
        do {
            taken = readAndProcessOnce();
            round += taken;
        } while (transport.isTls() && taken > 0 && readsOn() && round < READ_BUFFER_BYTES);
        if (transport.isTls() && taken > 0 && readsOn()) {
            server.readOnNextRound(this);
        }
    }

    private boolean readsOn() {
        return state != State.CLOSED && state != State.DRAINING && !readPaused && state != State.OPENING;
    }

    /** Whether this connection is to read on in the next round ({@link NbdServer#readOnNextRound}; selector thread). */
    boolean readOnQueued;

    /** Selector thread: a TLS connection whose session may hold more reads on ({@link #readAndProcess}). */
    void readOn() {
        guarded(() -> {
            if (key.isValid() && readsOn()) {
                readAndProcess();
            }
        });
    }

    /**
     * A TLS read stopped because the session must write first, and the socket has not taken it
     * yet; since when (selector thread).
     */
    private boolean readWaitsForWrite;
    private long readWaitsForWriteSince;

    /** Bytes the last read call of {@link #readOnce} took (selector thread). */
    private int lastRead;

    /**
     * Reads and decodes. In a stream of large writes ({@link #largeWrites}) it reads on while each
     * read fills all it offered, so that the socket may hold more, up to
     * {@link NbdServer#ROUND_WRITE_BYTES} in one readiness event: one read call per request, and
     * no return to the selector between them, where there were two calls and a select; a
     * connection takes no more of the selector's round than the write side gives one. Small
     * requests come many to a read of {@link #in}: one read per event, as reading on was slower
     * for 4 KiB writes (docs/benchmarks.md, section 5). Returns the bytes taken.
     */
    private long readAndProcessOnce() throws IOException {
        long taken = 0;
        boolean more;
        do {
            more = readOnce();
            taken += lastRead;
        } while (more && largeWrites && taken < NbdServer.ROUND_WRITE_BYTES && !readPaused
                && (state == State.REQUEST_HEADER || state == State.PAYLOAD));
        return taken;
    }

    /**
     * One read call, then decodes: in a payload, its rest and the header behind it (after a
     * large write) or the buffer (after a small one), scattered; else into {@link #in}, one
     * header at a time after a large write. True if the read filled everything it was offered.
     */
    private boolean readOnce() throws IOException {
        lastRead = 0;
        ByteBuffer payload = state == State.PAYLOAD ? payloadRequest.payload : null;
        if (payload == null && (state == State.CLOSED || state == State.DRAINING || readPaused)) {
            return false;
        }
        int limit = in.limit();
        if (largeWrites && (payload != null || state == State.REQUEST_HEADER) && in.position() < Nbd.REQUEST_HEADER_BYTES) {
            in.limit(Nbd.REQUEST_HEADER_BYTES);
        }
        long offered = in.remaining() + (payload == null ? 0 : payload.remaining());
        long n;
        try {
            n = payload == null ? transport.read(in) : transport.read(payload, in);
        } finally {
            in.limit(limit);
        }
        if (n == 0 && transport.readWantsWrite()) {
            // The TLS session must send first (its handshake, the answer to a key update): nothing
            // is read until the socket takes it, and onWritable reads again. Reading on would spin,
            // the socket readable and every read waiting for that write; a client that reads
            // nothing is closed after the write-stall timeout, as one that leaves replies unread.
            if (!readWaitsForWrite) {
                readWaitsForWrite = true;
                readWaitsForWriteSince = System.nanoTime();
            }
            if (key.isValid()) {
                key.interestOps((key.interestOps() | SelectionKey.OP_WRITE) & ~SelectionKey.OP_READ);
            }
        }
        lastRead = (int) Math.max(0, n);
        if (n < 0) {
            if (payload != null) {
                abort("client closed the connection");
            } else {
                // the client went away: in-flight requests still complete, then the connection closes
                shutdown("client closed the connection");
            }
            return false;
        }
        if (n > 0) {
            lastActivityAt = System.nanoTime();
        }
        if (payload != null) {
            if (payload.hasRemaining()) {
                return false; // a scattering read fills in order: nothing reached the header
            }
            NbdRequest r = payloadRequest;
            payloadRequest = null;
            requestBegunAt = 0;
            state = State.REQUEST_HEADER;
            r.payload.flip();
            dispatch(r);
            if (state == State.CLOSED || state == State.DRAINING || readPaused) {
                return false; // what reached {@link #in} is decoded when reading resumes
            }
        }
        process();
        return n == offered;
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
            // a request half received (the rest of a header waits in the buffer, or a payload, kept
            // or dropped) began now, if not before
            boolean partial = receivingPayload() || state == State.REQUEST_HEADER && in.position() > 0;
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
            case OPTIONS -> {
                return options.step(in);
            }
            case DISCARD -> { // an oversized write's payload
                int n = (int) Math.min(discardRemaining, in.remaining());
                in.position(in.position() + n);
                discardRemaining -= n;
                if (discardRemaining > 0) {
                    return false;
                }
                NbdRequest r = discarded;
                discarded = null;
                state = State.REQUEST_HEADER;
                r.replyError(Nbd.EINVAL, "request larger than the maximum payload of " + MAX_PAYLOAD + " bytes");
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

    /**
     * Selector thread: attaches to {@code v} and enters transmission, then calls {@code then}
     * (on the selector thread) with whether it did. If the volume's files are not open yet, they
     * are opened on the server's opener thread, never here (a slow disk would hold up every
     * client): the connection reads nothing meanwhile and {@code then} runs when the open is done.
     */
    void enterTransmission(VolumeStore v, java.util.function.Consumer<Boolean> then) {
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
                state = State.OPTIONS;
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

    /** The size of the export in transmission. */
    long exportSize() {
        return exportSize;
    }

    /** Whether structured replies were negotiated. */
    boolean structured() {
        return options.structured();
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
        largeWrites = type == Nbd.CMD_WRITE && length >= DIRECT_PAYLOAD_BYTES;
        NbdRequest r = new NbdRequest(this, type, flags, cookie, offset, length);
        if (type == Nbd.CMD_WRITE) {
            if (length > MAX_PAYLOAD) {
                // the payload still follows: skip it, then refuse
                discardRemaining = length;
                discarded = r;
                state = State.DISCARD;
                return true;
            }
            if (!r.acquireShared((int) length)) {
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
        if (type == Nbd.CMD_READ && r.validate(exportSize, options.structured(), options.metaContext()) == 0) {
            // the reply buffer is taken here, within the node's budget, as a write's payload is
            boolean acquired;
            try {
                acquired = r.acquireShared(replyHeaderBytes() + (int) length);
            } catch (OutOfMemoryError e) {
                if (!OutOfMemory.isDirect(e)) {
                    throw e;
                }
                r.replyError(Nbd.ENOMEM, "out of memory: " + e.getMessage());
                return true;
            }
            if (!acquired) {
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
    int replyHeaderBytes() {
        return options.structured() ? Nbd.CHUNK_HEADER_BYTES + 8 : Nbd.SIMPLE_REPLY_BYTES;
    }

    /** Validates and submits a decoded request, or answers it with an error at once. */
    private void dispatch(NbdRequest r) {
        int error = r.validate(exportSize, options.structured(), options.metaContext());
        if (error != 0) {
            r.release();
            r.replyError(error, r.errorMessage(error, exportSize, options.metaContext()));
            return;
        }
        inFlight.incrementAndGet();
        buffered.addAndGet(r.bufferedBytes());
        ReplicatedVolume replicated = volume.replication;
        if (replicated == null || !replicated.hold.holdUntilConfirmed(this, serving -> {
            if (serving) {
                start(r);
            } else {
                r.refuse(Nbd.ESHUTDOWN, NbdRequest.NOT_PRIMARY);
            }
        })) {
            start(r);
        }
        if (atBounds()) {
            pauseReading();
        }
    }

    /**
     * Submits a request counted in flight (or runs it, with QoS off), or answers it at once if it
     * cannot be. The selector thread, or whichever confirms a restarted primary that held it
     * ({@link ConfirmationHold#holdUntilConfirmed}).
     */
    private void start(NbdRequest r) {
        try {
            if (server.bypass != null) {
                server.bypass.execute(r::call);
            } else {
                submit(r, true);
            }
        } catch (QueueFullException e) {
            r.refuse(Nbd.ENOMEM, "volume queue full; retry later");
        } catch (IllegalArgumentException | RejectedExecutionException e) {
            r.refuse(Nbd.ESHUTDOWN, NbdRequest.REMOVED);
        }
    }

    /** Submits a request whole, or its first or a later piece ({@link NbdRequest#piecewise}). */
    private void submit(NbdRequest r, boolean first) {
        if (first && !r.piecewise()) {
            server.executor.submit(volume.id, r.kind(), r.cost(), r).whenComplete(r);
        } else {
            server.executor.submitPiece(volume.id, r.kind(), r.pieceBytes(), first, r.lastPiece(), r).whenComplete(r);
        }
    }

    /**
     * Worker thread: submits the next piece of a piecewise request whose last piece ran. Returns
     * null, or why it could not (the volume is gone, the node is stopping): the caller answers.
     */
    String submitNextPiece(NbdRequest r) {
        try {
            submit(r, false);
            return null;
        } catch (IllegalArgumentException | RejectedExecutionException e) {
            return e.getMessage();
        }
    }

    /**
     * Whether the connection is at its bounds, so that nothing more is read from it: requests
     * not yet answered to the client (in flight, or answered and their reply still queued, which
     * covers option replies and requests answered at once with an error) reach the in-flight
     * limit, or payloads and unwritten replies reach the byte limit.
     */
    private boolean atBounds() {
        return inFlight.get() + replies.queued() >= server.limits.maxInFlight()
                || buffered.get() >= server.limits.maxBufferedBytes();
    }

    private void pauseReading() {
        if (!readPaused) {
            java.util.function.Consumer<NbdConnection> probe = server.beforePause;
            if (probe != null) {
                probe.accept(this);
            }
            readPaused = true;
            if (key.isValid()) {
                key.interestOps(key.interestOps() & ~SelectionKey.OP_READ);
            }
            // A worker that ended a request before it could see readPaused woke nobody; if that
            // brought the connection below the mark, nothing else will: look again. (The worker
            // counts first and then reads readPaused, this thread the other way round, all
            // volatile: one of the two sees the other.)
            if (!resumeQueued && belowResumeMark(inFlight.get(), buffered.get())) {
                resumeQueued = true;
                server.execute(this, this::resumeReading);
            }
        }
    }

    /**
     * Whether a connection that stopped reading at its bounds may read again: requests in flight
     * and queued replies below half the in-flight limit, and buffered bytes below half the byte
     * limit (halfway, so that it does not stop and start at every request).
     */
    private boolean belowResumeMark(int inFlightNow, long bufferedNow) {
        return inFlightNow + replies.queued() < server.limits.maxInFlight() / 2 + 1
                && bufferedNow < server.limits.maxBufferedBytes() / 2 + 1;
    }

    /** Selector thread: buffers were released while this connection waited for the budget; try again. */
    void memoryAvailable() {
        memoryWait = false;
        resumeReading();
    }

    /** Selector thread: reads again once below the bounds. */
    private void resumeReading() {
        resumeQueued = false;
        if (!readPaused || replies.isClosed() || state == State.DRAINING) {
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
        if (key.isValid() && !readWaitsForWrite) {
            key.interestOps(key.interestOps() | SelectionKey.OP_READ);
        }
        try {
            process(); // requests already buffered
            if (transport.isTls() && !readPaused) {
                readAndProcess(); // and those the TLS session holds decrypted, which no OP_READ announces
            }
        } catch (IOException e) {
            abort(e.getMessage());
        }
    }

    /** Requests counted in flight (tests). */
    int inFlightCount() {
        return inFlight.get();
    }

    /** Any thread: one request fully answered (held with its reply while the thread holds replies, {@link ReplyBatch}). */
    @Override
    public void requestDone(long bytes) {
        ReplyBatch.Held held = ReplyBatch.current();
        if (held != null) {
            held.holdDone(this, bytes);
            return;
        }
        lastActivityAt = System.nanoTime();
        int n = inFlight.decrementAndGet();
        long b = buffered.addAndGet(-bytes);
        if (state == State.DRAINING && n == 0 || readPaused && !resumeQueued && belowResumeMark(n, b)) {
            resumeQueued = true;
            server.execute(this, this::resumeReading);
        }
    }

    // --- output (any thread) -----------------------------------------------------------------------

    /**
     * Writes {@code b} (position to limit) and returns it to the pool once written: at once if
     * nothing is queued and the socket takes it, else after the queued replies, from the selector
     * thread; held with the others of its batch when a worker runs a batch, or a replication
     * link's reader a read's answers ({@link ReplyBatch}).
     * Never blocks.
     */
    void send(ByteBuffer b) {
        ReplyBatch.Held held = ReplyBatch.current();
        if (held != null) {
            held.hold(this, b); // a worker running a batch: written with the batch's other replies
            return;
        }
        sendNow(new ByteBuffer[] {b}, 1);
    }

    /**
     * Writes {@code n} replies in order (those a {@link ReplyBatch} held, or {@link #send}'s one)
     * through {@link NbdReplies#add}, and has the selector watch for writability when they queue.
     */
    @Override
    public void sendNow(ByteBuffer[] batch, int n) {
        boolean wake;
        try {
            wake = replies.add(batch, n);
        } catch (IOException | RuntimeException e) {
            closeFromAnyThread("write failed: " + e.getMessage());
            return;
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

    /** Selector thread: writes queued replies while the socket takes them, then reads again or closes if it waited for that. */
    private void flushQueued() throws IOException {
        boolean empty = replies.write(key);
        if (readPaused && (empty || replies.queued() < server.limits.maxInFlight() / 2 + 1)) {
            resumeReading();
        } else if (empty) {
            maybeFinishDrain();
        }
    }

    /**
     * In transmission, between a WRITE's header and the end of its payload: one the node keeps,
     * or one above {@link #MAX_PAYLOAD} it reads and drops before it refuses the request.
     */
    private boolean receivingPayload() {
        return state == State.PAYLOAD || state == State.DISCARD;
    }

    /**
     * Selector thread: drops a client that has not taken any reply bytes for too long, that has
     * not entered transmission within the handshake timeout, or whose client certificate has
     * ended.
     */
    void checkStalled(long now) {
        if (volume == null && state != State.CLOSED && state != State.DRAINING
                && now - acceptedAt > server.limits.handshakeNanos()) {
            abort("handshake not finished within " + server.limits.handshakeNanos() / 1_000_000 + " ms");
            return;
        }
        if (requestBegunAt != 0 && !readPaused && (state == State.REQUEST_HEADER || receivingPayload())
                && now - requestBegunAt > server.limits.requestNanos()) {
            abort("request not received within " + server.limits.requestNanos() / 1_000_000 + " ms of its first byte");
            return;
        }
        if (replies.stalled(now, server.limits.writeStallNanos())
                || readWaitsForWrite && now - readWaitsForWriteSince > server.limits.writeStallNanos()) {
            abort("client stopped reading replies");
            return;
        }
        tls.checkExpiry();
    }

    /**
     * Selector thread: how long the connection has been idle, or -1 if it is not: idle is in
     * transmission with nothing in flight, nothing unsent and nothing half received.
     */
    long idleNanos(long now) {
        if (volume == null || state != State.REQUEST_HEADER || readPaused || inFlight.get() > 0 || replies.queued() > 0
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
     * Requests a restarted primary holds for this connection ({@link ConfirmationHold#letGo}) are
     * refused now that it drains or closes: they would keep it, and their buffers, for as long as
     * the node is unconfirmed.
     */
    private void letGoHeld() {
        VolumeStore v = volume;
        ReplicatedVolume replicated = v == null ? null : v.replication;
        if (replicated != null) {
            replicated.hold.letGo(this);
        }
    }

    /**
     * Selector thread: reads nothing more; closes once every in-flight request is answered and
     * written. Read interest goes too: a client's end of stream (or bytes it still sends) would
     * otherwise keep the key ready, and the selector would spin until the drain ends.
     */
    void drain() {
        state = State.DRAINING;
        if (key != null && key.isValid()) {
            key.interestOps(key.interestOps() & ~SelectionKey.OP_READ);
        }
        letGoHeld();
        maybeFinishDrain();
    }

    private void maybeFinishDrain() {
        if (state != State.DRAINING) {
            return;
        }
        if (replies.isEmpty() && inFlight.get() == 0) {
            close(null, true);
        }
    }

    void closeFromAnyThread(String why) {
        if (server.inSelectorThread()) {
            abort(why);
        } else {
            server.execute(this, () -> abort(why));
        }
    }

    /** Selector thread: hard disconnect; buffers of requests still in flight are released by their workers. */
    void abort(String why) {
        close(why, false);
    }

    /** Selector thread: closes the connection; {@code graceful} at its end, every reply written ({@link NbdTransport#closeGracefully}). */
    private void close(String why, boolean graceful) {
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
        replies.close();
        if (key != null) {
            key.cancel();
        }
        if (graceful) {
            transport.closeGracefully();
        } else {
            transport.close();
        }
        letGoHeld();
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
        return replies.isClosed();
    }
}
