package io.weir.datanode;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.util.UUID;

/**
 * The node-to-node replication protocol: a primary sends its copies the writes, trims,
 * write-zeroes and flushes its clients made, and each copy answers every request once, in any
 * order, after it has applied it (as durably as the request's FUA or FLUSH asked).
 *
 * <pre>
 * request (big-endian):  magic u32 0x57455250 ("WERP") | type u8 | flags u8 | 0 u16 | handle u64
 *                        | volume id 16 bytes | epoch u64 | offset u64 | length u32 | data (WRITE only)
 * reply:                 magic u32 0x57455252 ("WERR") | status u32 | handle u64 | epoch u64
 * hello (first, once):   magic u32 0x57455248 ("WERH") | sending node id 16 bytes
 * </pre>
 * A connection begins with the primary's hello, which names its node: in clear it is how the
 * copy tells one primary's connections from another's ({@link ReplicationServer}); over TLS it
 * must name the node of the sender's certificate.
 * A reply's epoch is the highest epoch the copy has seen for the volume, so a sender told
 * {@link #STALE_EPOCH} learns the epoch that deposed it. {@link #PING} applies nothing: a primary
 * sends it to announce its epoch (a deposed primary that hears of a higher epoch stops serving the
 * volume) and to test a copy before it resyncs it. A PING's offset carries a copy token: with
 * {@link #FLAG_ADOPT} one the copy keeps with its data file from then on (before it answers
 * {@link #ADOPTED}),
 * else the one the primary expects it to hold (0: none expected). Every other request of a primary
 * that gave the copy a token carries {@link #FLAG_TOKENED}. A copy whose file holds another token
 * than a PING expects, or none where a request carries that flag, answers it {@link #NEW_COPY}:
 * its file is not the one the primary sent its writes to ({@link ReplicatedVolume}, rule 8).
 */
final class ReplicationWire {

    static final int REQUEST_MAGIC = 0x5745_5250;
    static final int REPLY_MAGIC = 0x5745_5252;
    static final int REQUEST_BYTES = 52;
    static final int REPLY_BYTES = 24;
    static final int HELLO_MAGIC = 0x5745_5248;
    static final int HELLO_BYTES = 20;
    /** Largest data of one request: the largest NBD request. */
    static final int MAX_LENGTH = 32 << 20;

    static final byte WRITE = 1;
    static final byte ZEROES = 2;
    static final byte TRIM = 3;
    static final byte FLUSH = 4;
    static final byte PING = 5;

    static final byte FLAG_FUA = 1;
    static final byte FLAG_NO_HOLE = 2;
    /** On a PING: the copy is to keep the token in its offset as its data file's (see the class comment). */
    static final byte FLAG_ADOPT = 4;
    /** On any request but a PING: the primary gave the copy's file a token, which it must hold. */
    static final byte FLAG_TOKENED = 8;

    static final int OK = 0;
    /** The sender's epoch is below one the copy has seen: it is not the primary any more. */
    static final int STALE_EPOCH = 1;
    /** The node holds no copy of the volume (not configured yet, or removed). */
    static final int NOT_A_COPY = 2;
    static final int IO_ERROR = 3;
    /**
     * The copy's data file holds no token from the primary, or another than it expects: it is
     * new (its data lost, its disk replaced) and holds none of what the primary sent before.
     */
    static final int NEW_COPY = 4;
    /** The answer to an adopting PING of a copy that kept its token (one of a release before tokens answers OK). */
    static final int ADOPTED = 5;
    /** Not a status on the wire: the link to the copy failed before the reply came. */
    static final int LINK_DOWN = -1;

    private ReplicationWire() {
    }

    /**
     * One decoded request header. {@code length} is a u32 on the wire, as NBD's: a WRITE_ZEROES
     * or TRIM may cover up to 4 GiB - 1 bytes, a WRITE at most {@link #MAX_LENGTH}.
     */
    record Request(byte type, byte flags, long handle, UUID volume, long epoch, long offset, long length) {

        Request {
            if (length < 0 || length > 0xFFFF_FFFFL) {
                throw new IllegalArgumentException("replication request length " + length + " is not a u32");
            }
        }

        boolean fua() {
            return (flags & FLAG_FUA) != 0;
        }

        boolean noHole() {
            return (flags & FLAG_NO_HOLE) != 0;
        }

        /** Bytes of data that follow the header: a WRITE's length, none for the others. */
        long payload() {
            return type == WRITE ? length : 0;
        }

        void encode(ByteBuffer b) {
            b.clear();
            b.putInt(REQUEST_MAGIC).put(type).put(flags).putShort((short) 0).putLong(handle)
                    .putLong(volume.getMostSignificantBits()).putLong(volume.getLeastSignificantBits())
                    .putLong(epoch).putLong(offset).putInt((int) length).flip();
        }

        static Request decode(ByteBuffer b) throws IOException {
            if (b.getInt() != REQUEST_MAGIC) {
                throw new IOException("not a replication request (bad magic)");
            }
            byte type = b.get();
            byte flags = b.get();
            b.getShort();
            Request r = new Request(type, flags, b.getLong(), new UUID(b.getLong(), b.getLong()), b.getLong(), b.getLong(),
                    Integer.toUnsignedLong(b.getInt()));
            if (type < WRITE || type > PING || r.length > MAX_LENGTH && type == WRITE || r.offset < 0) {
                throw new IOException("bad replication request: " + r);
            }
            return r;
        }
    }

    static ByteBuffer hello(UUID node) {
        return ByteBuffer.allocate(HELLO_BYTES).putInt(HELLO_MAGIC).putLong(node.getMostSignificantBits())
                .putLong(node.getLeastSignificantBits()).flip();
    }

    /** The sending node a hello names. */
    static UUID decodeHello(ByteBuffer b) throws IOException {
        if (b.getInt() != HELLO_MAGIC) {
            throw new IOException("a replication connection that does not begin with a hello");
        }
        return new UUID(b.getLong(), b.getLong());
    }

    static void encodeReply(ByteBuffer b, int status, long handle, long epoch) {
        b.clear();
        b.putInt(REPLY_MAGIC).putInt(status).putLong(handle).putLong(epoch).flip();
    }

    static void readFully(ReadableByteChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                throw new EOFException("peer closed the replication connection");
            }
        }
    }

    static void writeFully(WritableByteChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            c.write(b);
        }
    }
}
