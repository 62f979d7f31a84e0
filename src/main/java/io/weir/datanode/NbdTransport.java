package io.weir.datanode;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLPeerUnverifiedException;
import tlschannel.NeedsReadException;
import tlschannel.NeedsWriteException;
import tlschannel.ServerTlsChannel;
import tlschannel.TlsChannel;
import tlschannel.WouldBlockException;

/**
 * The bytes of one NBD connection: its non-blocking socket in clear, and after NBD_OPT_STARTTLS
 * ({@link #startTls}) a tls-channel session over the same socket, still non-blocking on the same
 * selector. {@link NbdConnection} frames and queues; this class only moves bytes, and hides
 * which of the two carries them.
 *
 * <p>Over TLS three things differ from a plain socket, and each method says how it shows them:
 * a read may need the socket to be writable first (the handshake; {@link #takeReadWantsWrite}),
 * the session may hold decrypted bytes that no OP_READ announces (the connection reads on while a
 * read gives some, in the selector's next round past a receive buffer's worth), and a reply
 * counts as written only once its last record is on the socket: records of a write larger than
 * one record are gathered and sent together ({@link RecordBatchingChannel}), and what waits there
 * is sent by the next write.
 *
 * <p>Threads: reads are the selector thread's; writes are made under the connection's output
 * lock, by the selector thread or a worker, one at a time and in order.
 */
final class NbdTransport {

    private final SocketChannel channel;
    /** After STARTTLS: the TLS session over {@link #channel}; all IO goes through it. */
    private volatile TlsChannel tls;
    /** The socket under {@link #tls}, gathering the records of a large reply; null before STARTTLS. */
    private volatile RecordBatchingChannel tlsSocket;
    /** A TLS read needs to write (the handshake) before it can go on (selector thread). */
    private boolean readWantsWrite;
    /** The two buffers of a scattering read (selector thread). */
    private final ByteBuffer[] scatter = new ByteBuffer[2];
    /** {@link #write(ByteBuffer)}'s one-element array; used under the output lock only. */
    private final ByteBuffer[] one = new ByteBuffer[1];
    /** The write-stall clock ({@link #lastWriteProgress}); under the output lock (its connection's {@link NbdReplies}). */
    private long lastWriteProgress;

    NbdTransport(SocketChannel channel) {
        this.channel = channel;
    }

    /** Whether the connection speaks TLS. */
    boolean isTls() {
        return tls != null;
    }

    /**
     * Reads into {@code dst}: the bytes read, -1 at the end of stream, 0 when nothing came (over
     * TLS also while the session waits for the rest of a record, or must write first).
     */
    int read(ByteBuffer dst) throws IOException {
        return (int) readInto(dst, null);
    }

    /** As {@link #read(ByteBuffer)}, into {@code first} and then {@code second}, in one call. */
    long read(ByteBuffer first, ByteBuffer second) throws IOException {
        scatter[0] = first;
        scatter[1] = second;
        try {
            return readInto(null, scatter);
        } finally {
            scatter[0] = null;
            scatter[1] = null;
        }
    }

    private long readInto(ByteBuffer dst, ByteBuffer[] dsts) throws IOException {
        TlsChannel t = tls;
        try {
            if (t == null) {
                return dst != null ? channel.read(dst) : channel.read(dsts);
            }
            return dst != null ? t.read(dst) : t.read(dsts);
        } catch (NeedsReadException e) {
            return 0; // the socket has not the whole record yet: OP_READ brings the rest
        } catch (NeedsWriteException e) {
            readWantsWrite = true; // the handshake must send first: retry once the socket is writable
            return 0;
        } catch (IllegalStateException e) {
            // tls-channel's buffer cannot take a record the JDK would (a length past 17 KiB): the client's bad input
            throw new IOException("TLS record too large: " + e.getMessage(), e);
        }
    }

    /**
     * Whether the last read stopped because the TLS session must write first; clears it. The
     * caller then waits for the socket to be writable and reads again.
     */
    boolean takeReadWantsWrite() {
        boolean w = readWantsWrite;
        readWantsWrite = false;
        return w;
    }

    /** Whether a read stopped because the TLS session must write first, without clearing it. */
    boolean readWantsWrite() {
        return readWantsWrite;
    }

    /**
     * Writes {@code b} to the socket, or through the TLS session; answers whether all of it is on
     * the socket. Over TLS, {@code b} may be taken whole while records of it still wait for room
     * on the socket (in the session, or gathered in {@link #tlsSocket}): not flushed, so the
     * caller keeps it queued (empty) and a later write, which first sends what waits, completes
     * it. Caller holds the output lock: one wrap at a time, in order.
     */
    boolean write(ByteBuffer b) throws IOException {
        one[0] = b;
        try {
            return write(one, 1);
        } finally {
            one[0] = null;
        }
    }

    /** As {@link #write(ByteBuffer)}, for {@code bs[0..n)} in order, gathered into one write. */
    boolean write(ByteBuffer[] bs, int n) throws IOException {
        TlsChannel t = tls;
        if (t == null) {
            if (n == 1) {
                channel.write(bs[0]);
            } else {
                channel.write(bs, 0, n);
            }
            return !bs[n - 1].hasRemaining();
        }
        RecordBatchingChannel socket = tlsSocket;
        long bytes = 0;
        for (int i = 0; i < n; i++) {
            bytes += bs[i].remaining();
        }
        if (bytes > RecordBatchingChannel.RECORD_PLAINTEXT_BYTES) {
            socket.batch(); // several records: sent together
        }
        boolean wrapped;
        try {
            // returns once what it wrapped is on the socket, or gathered
            if (n == 1) {
                t.write(bs[0]);
            } else {
                t.write(bs, 0, n);
            }
            wrapped = !bs[n - 1].hasRemaining();
        } catch (WouldBlockException e) {
            wrapped = false; // the socket is full (or the session must read first): OP_WRITE resumes it
        }
        if (socket.flush() > 0) {
            lastWriteProgress = System.nanoTime();
        }
        return wrapped && !socket.hasStaged();
    }

    /**
     * When bytes of queued replies last reached the socket, or the first was queued: the
     * write-stall clock. Caller holds the output lock.
     */
    long lastWriteProgress() {
        return lastWriteProgress;
    }

    /** Restarts the write-stall clock: a reply was queued, or queued bytes were written. Output lock. */
    void markWriteProgress(long now) {
        lastWriteProgress = now;
    }

    /**
     * From the next byte on, the connection speaks TLS as the server of {@code context}. The
     * caller has checked that nothing is queued or buffered from before (CVE-2021-3716). The
     * session keeps its buffers (about 33 KiB of heap) instead of freeing and allocating them
     * again around every record: a quarter more 4 KiB reads a second over TLS.
     */
    void startTls(SSLContext context, BufferPool pool) {
        tlsSocket = new RecordBatchingChannel(channel, pool);
        tls = ServerTlsChannel.newBuilder(tlsSocket, context).withEngineFactory(NbdTls::serverEngine)
                .withReleaseBuffers(false).build();
    }

    /** The TLS client's certificate once its handshake is done, else null (also in clear). */
    X509Certificate peerCertificate() {
        TlsChannel t = tls;
        if (t == null) {
            return null;
        }
        try {
            java.security.cert.Certificate[] peer = t.getSslEngine().getSession().getPeerCertificates();
            return peer.length > 0 && peer[0] instanceof X509Certificate x ? x : null;
        } catch (SSLPeerUnverifiedException e) {
            return null; // the handshake is not done yet
        }
    }

    /**
     * Closes the connection at its end, every reply written (the client's NBD_CMD_DISC or
     * NBD_OPT_ABORT, or the end of its stream): over TLS the session is closed down first, its
     * close_notify written if the socket takes it at once, as the NBD protocol document asks
     * after a disconnect, so that the client can tell the end from a truncation. Then as
     * {@link #close}.
     */
    void closeGracefully() {
        TlsChannel t = tls;
        if (t != null) {
            try {
                t.shutdown(); // sends close_notify; the client's own is not waited for
                // What the client sent and nobody read (its own close_notify, say) would make the
                // close a reset, which may drop the replies and the close_notify still on their way.
                ByteBuffer unread = ByteBuffer.allocate(16 << 10);
                for (int i = 0; i < 16 && channel.read(unread.clear()) > 0; i++) {
                    // discarded: the socket is non-blocking, so this stops when nothing is left
                }
            } catch (IOException | RuntimeException e) {
                // the socket took nothing more, or the client is gone: closed without it
            }
        }
        close();
    }

    /** Closes the socket, and gives a TLS session's staged buffer back to the pool. */
    void close() {
        try {
            RecordBatchingChannel t = tlsSocket;
            if (t != null) {
                t.close();
            }
            channel.close();
        } catch (IOException ignored) {
            // closed anyway
        }
    }
}
