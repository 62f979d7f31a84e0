package io.weir.datanode;

import io.weir.scheduler.IoKind;
import io.weir.scheduler.QosExecutor;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;

/**
 * One transmission request: decoded on the selector thread, run by a scheduler worker, which
 * sends its reply. Also the completion callback of its scheduler future, which answers the
 * request if the scheduler failed it without running it (volume removed meanwhile).
 *
 * <p>A request that moves more than {@link #PIECE_BYTES} through the volume's file (READ,
 * WRITE, CACHE, WRITE_ZEROES with NO_HOLE) runs as pieces of at most that size, split at
 * multiples of it, each submitted to the scheduler once the one before it has run
 * ({@link QosExecutor#submitPiece}): a 32 MiB read then holds a worker for one piece at a time,
 * and another flow's request waits for a piece, not the whole read. The request still counts
 * once, and the reply goes out after the last piece (a read's data is read into its one reply
 * buffer piece by piece), so a piece that fails is answered as the request's error. Without
 * QoS (the scheduler bypassed) the pieces run one after the other on one worker.
 */
final class NbdRequest implements Callable<Void>, BiConsumer<Void, Throwable>, ReplyBatch.Work {

    private static final System.Logger LOG = System.getLogger(NbdRequest.class.getName());

    /** The error message of a request refused by a node that is not the volume's primary (ESHUTDOWN). */
    static final String NOT_PRIMARY = "this node is not the volume's primary at its newest epoch; reconnect to the"
            + " primary the control plane names";

    /** The error message of a request to a volume being removed (ESHUTDOWN). */
    static final String REMOVED = "volume is being removed";

    /**
     * The most a request moves through the volume's file in one run of a worker (1 MiB): larger
     * requests run as pieces. About half a millisecond of a worker's time for a read from the
     * page cache on the reference node, while the scheduler's overhead per piece is about a
     * microsecond.
     */
    static final int PIECE_BYTES = 1 << 20;

    final NbdConnection conn;
    final int type;
    final int flags;
    final long cookie;
    final long offset;
    final long length;
    ByteBuffer payload;
    /** Bytes of {@link #payload} counted in its volume's share of the buffer budget, or 0. */
    private long shared;
    /** The current piece ran (set by the worker; cleared before the next piece is submitted). */
    private boolean ran;
    /** Bytes of a piecewise request done so far (worker threads, one piece after the other). */
    private long done;

    NbdRequest(NbdConnection conn, int type, int flags, long cookie, long offset, long length) {
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
     * The error this request must be refused with on an export of {@code exportSize} bytes, or 0
     * if it may run: EINVAL for flags its command does not take, a length of 0, a range outside
     * the export (ENOSPC for writes), a READ above {@link NbdConnection#MAX_PAYLOAD} (EOVERFLOW with
     * structured replies), DF without
     * structured replies, BLOCK_STATUS without a metadata context, or an unknown command.
     */
    int validate(long exportSize, boolean structured, boolean metaContext) {
        long end = offset + length;
        boolean inRange = offset >= 0 && end >= offset && end <= exportSize;
        return switch (type) {
            case Nbd.CMD_READ -> (flags & ~(Nbd.CMD_FLAG_FUA | Nbd.CMD_FLAG_DF)) != 0 || length == 0 || !inRange
                    || (flags & Nbd.CMD_FLAG_DF) != 0 && !structured ? Nbd.EINVAL
                    // with structured replies the protocol allows EOVERFLOW: the client may retry smaller
                    : length > NbdConnection.MAX_PAYLOAD ? (structured ? Nbd.EOVERFLOW : Nbd.EINVAL) : 0;
            case Nbd.CMD_WRITE -> (flags & ~Nbd.CMD_FLAG_FUA) != 0 || length == 0 ? Nbd.EINVAL
                    : !inRange ? Nbd.ENOSPC : 0;
            case Nbd.CMD_WRITE_ZEROES -> (flags & ~(Nbd.CMD_FLAG_FUA | Nbd.CMD_FLAG_NO_HOLE)) != 0 || length == 0
                    ? Nbd.EINVAL : !inRange ? Nbd.ENOSPC : 0;
            case Nbd.CMD_TRIM -> (flags & ~Nbd.CMD_FLAG_FUA) != 0 || length == 0 || !inRange ? Nbd.EINVAL : 0;
            case Nbd.CMD_FLUSH -> (flags & ~Nbd.CMD_FLAG_FUA) != 0 ? Nbd.EINVAL : 0;
            case Nbd.CMD_CACHE -> (flags & ~Nbd.CMD_FLAG_FUA) != 0 || length == 0 || !inRange ? Nbd.EINVAL : 0;
            case Nbd.CMD_BLOCK_STATUS -> !metaContext || (flags & ~(Nbd.CMD_FLAG_FUA | Nbd.CMD_FLAG_REQ_ONE)) != 0
                    || length == 0 || !inRange ? Nbd.EINVAL : 0;
            default -> Nbd.EINVAL;
        };
    }

    /** The message of the error reply {@link #validate} chose. */
    String errorMessage(int error, long exportSize, boolean metaContext) {
        if (type > Nbd.CMD_BLOCK_STATUS) {
            return "unknown command " + type;
        }
        if (type == Nbd.CMD_BLOCK_STATUS && !metaContext) {
            return "no metadata context was negotiated";
        }
        return error == Nbd.ENOSPC ? "write beyond the end of the export (" + exportSize + " bytes)"
                : "invalid request: flags 0x" + Integer.toHexString(flags) + ", offset " + offset
                        + ", length " + length + ", export size " + exportSize;
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

    /**
     * Whether the request runs as pieces: it moves more than {@link #PIECE_BYTES} through the
     * volume's file ({@link #cost}).
     */
    boolean piecewise() {
        return cost() > PIECE_BYTES;
    }

    /**
     * The bytes of the next piece to run: of a piecewise request, up to the next multiple of
     * {@link #PIECE_BYTES} or the end; else the whole request.
     */
    long pieceBytes() {
        if (!piecewise()) {
            return length;
        }
        return pieceBytes(offset + done, offset + length);
    }

    /**
     * The bytes of the piece at {@code at} of a request ending at {@code end}: up to the next
     * multiple of {@link #PIECE_BYTES} or the end. A copy splits a primary's request the same way.
     */
    static long pieceBytes(long at, long end) {
        return Math.min(end, (at / PIECE_BYTES + 1) * PIECE_BYTES) - at;
    }

    /** Whether the next piece to run is the request's last. */
    boolean lastPiece() {
        return done + pieceBytes() >= length;
    }

    /** Bytes of the request's data, counted against the connection's byte limit while it is in flight. */
    long bufferedBytes() {
        return type == Nbd.CMD_READ || type == Nbd.CMD_WRITE ? length : 0;
    }

    /** Worker thread: runs the request, or its next piece. */
    @Override
    public Void call() {
        ran = true;
        VolumeStore v = conn.volume();
        boolean finished = true;
        try {
            if (conn.isClosed()) {
                return null; // nobody to answer
            }
            ReplicatedVolume replicated = v.replication;
            if (replicated != null && !replicated.serves()) {
                replyError(Nbd.ESHUTDOWN, NOT_PRIMARY);
                return null;
            }
            if (cost() > 0) { // moves data: READ, WRITE, CACHE, WRITE_ZEROES with NO_HOLE
                do {
                    piece(v);
                } while (done < length && conn.server.bypass != null);
                if (done < length) {
                    ran = false;
                    finished = conn.submitNextPiece(this) != null;
                    if (finished) {
                        replyError(Nbd.ESHUTDOWN, REMOVED);
                    }
                    return null;
                }
            }
            switch (type) {
                case Nbd.CMD_READ -> sendRead();
                case Nbd.CMD_CACHE -> replyOk();
                case Nbd.CMD_WRITE -> finished = replied(replicated, ReplicationWire.WRITE);
                case Nbd.CMD_FLUSH -> {
                    v.flush();
                    finished = replied(replicated, ReplicationWire.FLUSH);
                }
                case Nbd.CMD_TRIM -> {
                    v.trim(offset, length);
                    if ((flags & Nbd.CMD_FLAG_FUA) != 0) {
                        v.flush();
                    }
                    finished = replied(replicated, ReplicationWire.TRIM);
                }
                case Nbd.CMD_WRITE_ZEROES -> {
                    if (cost() == 0) {
                        v.writeZeroes(offset, length, false, fua()); // punches a hole: no data moved
                    }
                    finished = replied(replicated, ReplicationWire.ZEROES);
                }
                case Nbd.CMD_BLOCK_STATUS -> blockStatus(v);
                default -> replyError(Nbd.EINVAL, "unknown command");
            }
        } catch (VolumeClosedException e) {
            replyError(Nbd.ESHUTDOWN, REMOVED);
        } catch (IOException | RuntimeException e) {
            replyError(Nbd.errorOf(e), "IO error: " + e.getMessage());
        } catch (OutOfMemoryError e) {
            // no direct memory for the reply buffer: answer anyway, the client must not wait forever
            OutOfMemory.checkFatal(e); // unless it was the heap's
            replyError(Nbd.ENOMEM, "out of memory: " + e.getMessage());
        } catch (Error e) {
            // the JVM's InternalError for a SIGBUS (a page of the mapped checksum file the disk has
            // no room for), or a bug: the request is finished below, so it must be answered here
            failedWithError(e);
            replyError(Nbd.EIO, "internal error: " + e);
        } finally {
            if (finished) {
                release();
                done();
            }
        }
        return null;
    }

    /** Whether a request failed with an {@link Error} before (logged with its stack trace once). */
    private static volatile boolean failedWithErrorBefore;

    /** Logs an {@link Error} a request failed with: the first with its stack trace, later ones in a line. */
    private void failedWithError(Error e) {
        if (!failedWithErrorBefore) {
            failedWithErrorBefore = true;
            LOG.log(Level.ERROR, "a request on volume " + conn.volume().exportName + " failed; answered EIO", e);
        } else {
            LOG.log(Level.ERROR, "a request on volume {0} failed ({1}); answered EIO", conn.volume().exportName, e.toString());
        }
    }

    /**
     * Whether the request runs in a moment unless the store is slow: a READ or CACHE without
     * FUA (a replicated volume's too: it is read from this node's copy), or a WRITE without FUA,
     * on a replicated volume if its last forward found the links to the copies up: its worker
     * writes it here and queues its forwards, which {@link ReplyBatch} holds with the batch's
     * replies, and its reply comes once the copies answer. A FLUSH or FUA waits for the disk, and
     * a replicated write whose link is down waits for it to connect; {@link ReplyBatch} holds no
     * reply across such a request (and a send that finds a link gone down since writes what is
     * held first).
     */
    @Override
    public boolean quick() {
        VolumeStore v = conn.volume();
        if (v == null || fua()) {
            return false;
        }
        ReplicatedVolume rv = v.replication; // read once: a config that stops replicating the volume nulls it
        return type == Nbd.CMD_READ || type == Nbd.CMD_CACHE
                || type == Nbd.CMD_WRITE && (rv == null || rv.forwarded.forwardsAtOnce());
    }

    private boolean fua() {
        return (flags & Nbd.CMD_FLAG_FUA) != 0;
    }

    /**
     * Answers a request that changed the volume (or flushed it), done locally: at once for a
     * volume of one copy (true: the request is finished); for a replicated one, once its copies
     * have it ({@link ForwardedRequests#forward}), which then answers, releases and finishes it
     * (false).
     */
    private boolean replied(ReplicatedVolume replicated, byte wireType) {
        if (replicated == null) {
            replyOk();
            return true;
        }
        ByteBuffer data = wireType == ReplicationWire.WRITE ? payload.duplicate().position(0).limit((int) length) : null;
        replicated.forwarded.forward(wireType, fua(), (flags & Nbd.CMD_FLAG_NO_HOLE) != 0, offset, length, data, error -> {
            try {
                answerForwarded(error);
            } finally {
                release();
                done();
            }
        });
        return false;
    }

    /**
     * Answers a forwarded request, on whichever thread its copies' answers end: the worker that
     * forwarded it, or a link's reader. Throws nothing it could catch: the request is finished
     * here, and an error let out would answer it a second time (on the worker) or end the link.
     */
    private void answerForwarded(int error) {
        try {
            if (error == 0) {
                replyOk();
            } else {
                replyError(error, error == Nbd.ESHUTDOWN ? "this node is no longer the volume's primary"
                        : "the volume's copies did not take the request");
            }
        } catch (OutOfMemoryError e) {
            OutOfMemory.checkFatal(e); // no direct memory for the reply: answer anyway, as call() does
            replyError(Nbd.ENOMEM, "out of memory: " + e.getMessage());
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "answering a replicated request", e);
            conn.closeFromAnyThread("could not answer a request: " + e);
        }
    }

    /**
     * Runs a READ (into its reply buffer, behind room for the reply header), WRITE (FUA with the
     * last piece), CACHE (through the page cache) or WRITE_ZEROES with NO_HOLE: whole, or the next
     * piece of a piecewise one.
     */
    private void piece(VolumeStore v) throws IOException {
        int n = (int) pieceBytes();
        boolean last = lastPiece();
        long at = offset + done;
        boolean whole = n == length; // the common case: no view of the buffer to allocate
        switch (type) {
            case Nbd.CMD_READ -> {
                int hdr = conn.replyHeaderBytes();
                if (payload == null) {
                    payload = conn.pool.acquire(hdr + (int) length);
                }
                ByteBuffer b = whole ? payload : payload.duplicate();
                b.limit(hdr + (int) done + n).position(hdr + (int) done);
                v.read(at, b);
            }
            case Nbd.CMD_WRITE -> {
                ByteBuffer src = whole ? payload : payload.duplicate();
                src.limit((int) done + n).position((int) done);
                v.write(at, src, fua() && last);
            }
            case Nbd.CMD_WRITE_ZEROES -> v.writeZeroes(at, n, true, fua() && last);
            case Nbd.CMD_CACHE -> {
                ByteBuffer b = conn.pool.acquire(n); // through the page cache
                try {
                    v.read(at, b);
                } finally {
                    conn.pool.release(b);
                }
            }
            default -> throw new IllegalStateException("not a piecewise request: " + type);
        }
        done += n;
    }

    /** Scheduler future completed: answers the request if it never ran. */
    @Override
    public void accept(Void ignored, Throwable failure) {
        if (failure != null && !ran) {
            refuse(Nbd.ESHUTDOWN, REMOVED);
        }
    }

    /** Answers a request counted in flight that will not run with {@code error}, and finishes it. */
    void refuse(int error, String message) {
        release();
        replyError(error, message);
        done();
    }

    void done() {
        conn.requestDone(bufferedBytes());
    }

    void release() {
        ByteBuffer p = payload;
        if (p != null) {
            payload = null;
            unshare(); // first: the pool's release may retry a connection refused for its volume's share
            conn.pool.release(p);
        }
    }

    /**
     * Selector thread: takes {@link #payload} of {@code size} bytes from the node's budget within
     * its volume's share, and counts it in that share ({@link VolumeStore#requestBytes}) until it
     * is released or handed to the reply; false, with nothing taken, if there is no room now.
     */
    boolean acquireShared(int size) {
        AtomicLong share = conn.volume().requestBytes;
        payload = conn.pool.tryAcquire(size, share.get());
        if (payload == null) {
            return false;
        }
        shared = payload.capacity();
        share.addAndGet(shared);
        return true;
    }

    private void unshare() {
        if (shared != 0) {
            conn.volume().requestBytes.addAndGet(-shared);
            shared = 0;
        }
    }

    /**
     * Sends a READ's reply: its data, read into the reply buffer (taken within the node's budget
     * when the request was decoded), behind the header written here.
     */
    private void sendRead() {
        int len = (int) length;
        int hdr = conn.replyHeaderBytes();
        ByteBuffer b = payload;
        payload = null;
        unshare(); // the reply's buffer from here on: the connection's output bound counts it
        b.position(0);
        if (conn.structured()) {
            chunkHeader(b, Nbd.REPLY_TYPE_OFFSET_DATA, 8 + len).putLong(offset);
        } else {
            simpleHeader(b, 0);
        }
        b.position(0).limit(hdr + len);
        conn.send(b);
    }

    private void blockStatus(VolumeStore v) throws IOException {
        int max = (flags & Nbd.CMD_FLAG_REQ_ONE) != 0 ? 1 : NbdConnection.MAX_EXTENTS;
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
        chunkHeader(b, Nbd.REPLY_TYPE_BLOCK_STATUS, len).putInt(Nbd.BASE_ALLOCATION_ID);
        b.position(0).limit(Nbd.CHUNK_HEADER_BYTES + len);
        conn.send(b);
    }

    private void replyOk() {
        ByteBuffer b = conn.pool.acquire(Nbd.SIMPLE_REPLY_BYTES);
        simpleHeader(b, 0).flip();
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
        if (conn.structured()) {
            byte[] m = Nbd.message(message);
            ByteBuffer b = conn.pool.acquire(Nbd.CHUNK_HEADER_BYTES + 6 + m.length);
            chunkHeader(b, Nbd.REPLY_TYPE_ERROR, 6 + m.length).putInt(error).putShort((short) m.length).put(m).flip();
            conn.send(b);
        } else {
            ByteBuffer b = conn.pool.acquire(Nbd.SIMPLE_REPLY_BYTES);
            simpleHeader(b, error).flip();
            conn.send(b);
        }
    }

    /** Writes the simple reply header (magic, {@code error}, cookie): the one place it is written. */
    private ByteBuffer simpleHeader(ByteBuffer b, int error) {
        return b.putInt(Nbd.SIMPLE_REPLY_MAGIC).putInt(error).putLong(cookie);
    }

    /**
     * Writes the header of the structured reply's one (final) chunk of {@code type} and
     * {@code length} payload bytes: the one place it is written (every reply is one chunk).
     */
    private ByteBuffer chunkHeader(ByteBuffer b, int type, int length) {
        return b.putInt(Nbd.STRUCTURED_REPLY_MAGIC).putShort((short) Nbd.REPLY_FLAG_DONE).putShort((short) type)
                .putLong(cookie).putInt(length);
    }
}
