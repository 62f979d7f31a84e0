package io.weir.datanode;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;

/**
 * The socket as a connection's TLS session (tls-channel) sees it: reads go straight to the
 * socket; the records of one large reply are gathered and sent together. tls-channel writes each
 * record (at most 16 KiB of plaintext) with a system call of its own as soon as it is wrapped:
 * 64 for a 1 MiB read reply, each taking the whole TCP path. While a {@link #batch} is open, the
 * records written go into a buffer of {@link #BATCH_BYTES} from the pool and reach the socket a
 * batch at a time, in the order they were wrapped; {@link #flush} sends the rest.
 *
 * <p>Bytes staged and not yet sent keep their order with everything written after them: a
 * write outside a batch (the TLS handshake, a close_notify, from the selector thread) goes
 * straight to the socket only while nothing is staged, and is staged behind it otherwise. A
 * writer that leaves bytes staged is told so by {@link #flush} and must call it again when the
 * socket is writable. If the pool's budget has no room for a batch buffer, records go to the
 * socket one by one, as without this class (and so they do when the JVM has no direct memory for
 * the buffer). Thread-safe: every method that touches the buffer
 * holds this object's monitor, never while calling into tls-channel.
 */
final class RecordBatchingChannel implements ByteChannel {

    /**
     * Bytes of records sent with one system call: 63 of the 65 records of a 1 MiB reply, whose
     * last two go in a second call (five calls with 256 KiB; 1 MiB cut the node's CPU per GiB over
     * TLS by a tenth and fio's by 6%, docs/benchmarks.md §12). Taken from the pool's budget only
     * while a large reply is written.
     */
    static final int BATCH_BYTES = 1 << 20;
    /**
     * Largest plaintext of one TLS record: a reply of at most this many bytes is one record, with
     * nothing to gather ({@link NbdConnection} opens no batch for it).
     */
    static final int RECORD_PLAINTEXT_BYTES = 16 << 10;

    private final SocketChannel socket;
    private final BufferPool pool;
    /** Records not yet sent (position = bytes staged), or null: a buffer of the pool. */
    private ByteBuffer staged;
    /** The thread whose writes are gathered now, or null. */
    private Thread batching;
    private boolean closed;

    RecordBatchingChannel(SocketChannel socket, BufferPool pool) {
        this.socket = socket;
        this.pool = pool;
    }

    @Override
    public int read(ByteBuffer dst) throws IOException {
        return socket.read(dst);
    }

    /** From now until {@link #flush}, this thread's writes are gathered. */
    synchronized void batch() {
        batching = Thread.currentThread();
    }

    /**
     * Ends the batch and sends what is staged while the socket takes it; answers how many bytes
     * it sent. If some are left ({@link #hasStaged}), the caller calls this again once the socket
     * is writable.
     */
    synchronized int flush() throws IOException {
        batching = null;
        return staged == null ? 0 : send();
    }

    /** Whether records wait here for the socket. */
    synchronized boolean hasStaged() {
        return staged != null;
    }

    @Override
    public synchronized int write(ByteBuffer src) throws IOException {
        if (closed) {
            throw new ClosedChannelException();
        }
        int n = src.remaining();
        if (staged != null && staged.remaining() < n) {
            send();
            if (staged != null && staged.remaining() < n) {
                return 0; // the socket is full: tls-channel keeps the record and raises WouldBlock
            }
        }
        if (staged == null) {
            if (batching != Thread.currentThread() || n > BATCH_BYTES) {
                return socket.write(src); // nothing staged to keep order with, and nothing to gather
            }
            try {
                staged = pool.tryAcquire(BATCH_BYTES);
            } catch (OutOfMemoryError e) {
                staged = null; // the JVM has no direct memory for a new one: as without room
            }
            if (staged == null) {
                return socket.write(src); // no room in the node's budget: one record at a time
            }
            staged.clear();
        }
        staged.put(src);
        if (!staged.hasRemaining()) {
            send();
        }
        return n;
    }

    /**
     * Writes staged bytes while the socket takes them, and gives the buffer back once all are
     * sent; answers how many it sent.
     */
    private int send() throws IOException {
        staged.flip();
        int sent = 0;
        try {
            int n;
            while (staged.hasRemaining() && (n = socket.write(staged)) > 0) {
                sent += n;
            }
        } finally {
            staged.compact();
        }
        if (staged.position() == 0) {
            pool.release(staged);
            staged = null;
        }
        return sent;
    }

    @Override
    public boolean isOpen() {
        return socket.isOpen();
    }

    /** Closes the socket and gives back the staged buffer; staged records are dropped. */
    @Override
    public synchronized void close() throws IOException {
        closed = true;
        if (staged != null) {
            pool.release(staged);
            staged = null;
        }
        socket.close();
    }
}
