package io.weir.datanode;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A small NBD client over a plain socket, for tests that need to see the protocol byte for byte
 * (option replies, error codes, reply order). Not thread-safe.
 */
final class NbdTestClient implements AutoCloseable {

    record OptionReply(int option, int type, byte[] data) {
        String message() {
            return new String(data, StandardCharsets.UTF_8);
        }
    }

    /** A reply: error 0 for success; data for READ; extents (length, flags pairs) for BLOCK_STATUS. */
    record Reply(long cookie, int error, byte[] data, List<int[]> extents, String message) {
    }

    Socket socket;
    /** The TCP socket, under {@link #socket} once it speaks TLS: closing it never waits for TLS's locks. */
    final Socket tcp;
    DataInputStream in;
    DataOutputStream out;
    boolean structured;
    long exportSize;
    int transmissionFlags;
    /** NBD_INFO_BLOCK_SIZE of the last GO: minimum, preferred, maximum; null if the server sent none. */
    int[] blockSize;
    private final Map<Long, int[]> pending = new HashMap<>(); // cookie -> {type, length}

    NbdTestClient(InetSocketAddress address) throws IOException {
        this(new Socket(address.getAddress(), address.getPort()));
    }

    /**
     * A client over a {@link java.nio.channels.SocketChannel}, whose {@link #socket} has a channel:
     * a test can switch it to non-blocking to send without ever blocking on the node (a flood).
     */
    static NbdTestClient overChannel(InetSocketAddress address) throws IOException {
        return new NbdTestClient(java.nio.channels.SocketChannel.open(address).socket());
    }

    /** A client whose connection comes from the local address {@code from} (any 127.x.y.z on Linux). */
    static NbdTestClient from(InetSocketAddress address, String from) throws IOException {
        return new NbdTestClient(new Socket(address.getAddress(), address.getPort(), java.net.InetAddress.getByName(from), 0));
    }

    private NbdTestClient(Socket socket) throws IOException {
        this.socket = socket;
        this.tcp = socket;
        socket.setSoTimeout(20_000);
        socket.setTcpNoDelay(true);
        in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
        out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
    }

    /** Reads the greeting and sends client flags (fixed newstyle, no zeroes). */
    NbdTestClient handshake() throws IOException {
        long magic = in.readLong();
        long opt = in.readLong();
        int flags = in.readUnsignedShort();
        if (magic != Nbd.NBDMAGIC || opt != Nbd.IHAVEOPT || (flags & 3) != 3) {
            throw new IOException("bad greeting");
        }
        out.writeInt(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES);
        out.flush();
        return this;
    }

    /**
     * Negotiates NBD_OPT_STARTTLS and, on its acknowledgement, continues over TLS with
     * {@code context} (the handshake runs at once). Answers the server's reply.
     */
    OptionReply startTls(javax.net.ssl.SSLContext context) throws IOException {
        return startTls(context, new String[0]);
    }

    /** {@link #startTls(javax.net.ssl.SSLContext)} offering only {@code protocols} (none: the context's). */
    OptionReply startTls(javax.net.ssl.SSLContext context, String... protocols) throws IOException {
        List<OptionReply> replies = option(Nbd.OPT_STARTTLS, new byte[0]);
        OptionReply r = replies.get(replies.size() - 1);
        if (r.type() != Nbd.REP_ACK) {
            return r;
        }
        javax.net.ssl.SSLSocket tls = (javax.net.ssl.SSLSocket) context.getSocketFactory().createSocket(socket,
                socket.getInetAddress().getHostAddress(), socket.getPort(), true);
        tls.setUseClientMode(true);
        if (protocols.length > 0) {
            tls.setEnabledProtocols(protocols);
        }
        tls.startHandshake();
        socket = tls;
        in = new DataInputStream(new BufferedInputStream(tls.getInputStream()));
        out = new DataOutputStream(new BufferedOutputStream(tls.getOutputStream()));
        return r;
    }

    void sendOption(int option, byte[] data) throws IOException {
        out.writeLong(Nbd.IHAVEOPT);
        out.writeInt(option);
        out.writeInt(data.length);
        out.write(data);
        out.flush();
    }

    OptionReply readOptionReply() throws IOException {
        long magic = in.readLong();
        if (magic != Nbd.OPTION_REPLY_MAGIC) {
            throw new IOException("bad option reply magic " + Long.toHexString(magic));
        }
        int opt = in.readInt();
        int type = in.readInt();
        int len = in.readInt();
        byte[] d = new byte[len];
        in.readFully(d);
        return new OptionReply(opt, type, d);
    }

    /** Sends an option and reads replies up to and including the final one (ACK or error). */
    List<OptionReply> option(int option, byte[] data) throws IOException {
        sendOption(option, data);
        List<OptionReply> replies = new ArrayList<>();
        for (;;) {
            OptionReply r = readOptionReply();
            replies.add(r);
            if (r.type() == Nbd.REP_ACK || r.type() < 0) {
                return replies;
            }
        }
    }

    static byte[] goData(String name, int... infos) {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(4 + n.length + 2 + 2 * infos.length);
        b.putInt(n.length).put(n).putShort((short) infos.length);
        for (int i : infos) {
            b.putShort((short) i);
        }
        return b.array();
    }

    static byte[] metaData(String name, String... queries) {
        java.io.ByteArrayOutputStream bo = new java.io.ByteArrayOutputStream();
        DataOutputStream d = new DataOutputStream(bo);
        try {
            byte[] n = name.getBytes(StandardCharsets.UTF_8);
            d.writeInt(n.length);
            d.write(n);
            d.writeInt(queries.length);
            for (String q : queries) {
                byte[] qb = q.getBytes(StandardCharsets.UTF_8);
                d.writeInt(qb.length);
                d.write(qb);
            }
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return bo.toByteArray();
    }

    /** Structured replies, base:allocation, then GO; fails unless the export is served. */
    NbdTestClient open(String export) throws IOException {
        handshake();
        return negotiate(export);
    }

    /** As {@link #open}, after the greeting (and after STARTTLS, for a TLS test). */
    NbdTestClient negotiate(String export) throws IOException {
        expectAck(option(Nbd.OPT_STRUCTURED_REPLY, new byte[0]));
        structured = true;
        expectAck(option(Nbd.OPT_SET_META_CONTEXT, metaData(export, Nbd.BASE_ALLOCATION)));
        go(export);
        return this;
    }

    /**
     * Whether {@code export} at {@code address} ({@code host:port}) is served and accepts a 4 KiB
     * write of zeroes at {@code offset} now; false when the node refuses the connection, the export
     * or the write.
     */
    static boolean writeAccepted(String address, String export, long offset) {
        int colon = address.lastIndexOf(':');
        try (NbdTestClient c = new NbdTestClient(new InetSocketAddress(address.substring(0, colon),
                Integer.parseInt(address.substring(colon + 1)))).open(export)) {
            return c.call(Nbd.CMD_WRITE, 0, offset, 4096, new byte[4096]).error() == 0;
        } catch (IOException e) {
            return false;
        }
    }

    /** Simple replies only, then GO. */
    NbdTestClient openSimple(String export) throws IOException {
        handshake();
        go(export);
        return this;
    }

    private void go(String export) throws IOException {
        List<OptionReply> replies = option(Nbd.OPT_GO, goData(export, Nbd.INFO_BLOCK_SIZE));
        expectAck(replies);
        for (OptionReply r : replies) {
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(r.data());
            if (r.type() == Nbd.REP_INFO && r.data().length == 12 && b.getShort() == Nbd.INFO_EXPORT) {
                exportSize = b.getLong();
                transmissionFlags = b.getShort() & 0xffff;
            } else if (r.type() == Nbd.REP_INFO && r.data().length == 14 && b.getShort() == Nbd.INFO_BLOCK_SIZE) {
                blockSize = new int[] {b.getInt(), b.getInt(), b.getInt()};
            }
        }
    }

    private static void expectAck(List<OptionReply> replies) throws IOException {
        OptionReply last = replies.get(replies.size() - 1);
        if (last.type() != Nbd.REP_ACK) {
            throw new IOException("option refused: " + Integer.toHexString(last.type()) + " " + last.message());
        }
    }

    void request(int type, int flags, long cookie, long offset, long length, byte[] payload) throws IOException {
        out.writeInt(Nbd.REQUEST_MAGIC);
        out.writeShort(flags);
        out.writeShort(type);
        out.writeLong(cookie);
        out.writeLong(offset);
        out.writeInt((int) length);
        if (payload != null) {
            out.write(payload);
        }
        pending.put(cookie, new int[] {type, (int) length});
    }

    void flushOut() throws IOException {
        out.flush();
    }

    /**
     * Reads {@code rounds} times {@code depth} blocks of {@code data} (already written at offset
     * 0) with {@code depth} requests in flight, of 4 KiB and 64 KiB by turns at pseudo-random
     * offsets, and checks each reply against the block its request named: replies that workers
     * finish together each arrive whole with their own data.
     */
    void readsMatchWithManyInFlight(byte[] data, int rounds, int depth) throws IOException {
        java.util.Random random = new java.util.Random(11);
        Map<Long, long[]> asked = new HashMap<>();
        long cookie = 1_000;
        for (int r = 0; r < rounds; r++) {
            for (int i = 0; i < depth; i++) {
                int size = i % 2 == 0 ? 4096 : 65_536;
                long offset = (long) random.nextInt((data.length - size) / 4096) * 4096;
                asked.put(cookie, new long[] {offset, size});
                request(Nbd.CMD_READ, 0, cookie++, offset, size, null);
            }
            flushOut();
            for (int i = 0; i < depth; i++) {
                Reply reply = readReply();
                long[] a = asked.remove(reply.cookie());
                org.assertj.core.api.Assertions.assertThat(reply.error()).isZero();
                org.assertj.core.api.Assertions.assertThat(reply.data()).as("the read of %d at %d", a[1], a[0])
                        .isEqualTo(java.util.Arrays.copyOfRange(data, (int) a[0], (int) (a[0] + a[1])));
            }
        }
        org.assertj.core.api.Assertions.assertThat(asked).isEmpty();
    }

    Reply readReply() throws IOException {
        int magic = in.readInt();
        if (magic == Nbd.SIMPLE_REPLY_MAGIC) {
            int error = in.readInt();
            long cookie = in.readLong();
            int[] p = pending.remove(cookie);
            if (p == null) {
                throw new IOException("reply to unknown cookie " + cookie);
            }
            byte[] data = null;
            if (p[0] == Nbd.CMD_READ && error == 0) {
                data = new byte[p[1]];
                in.readFully(data);
            }
            return new Reply(cookie, error, data, null, null);
        }
        if (magic != Nbd.STRUCTURED_REPLY_MAGIC) {
            throw new IOException("bad reply magic " + Integer.toHexString(magic));
        }
        byte[] data = null;
        List<int[]> extents = null;
        int error = 0;
        String message = null;
        for (;;) {
            int flags = in.readUnsignedShort();
            int type = in.readUnsignedShort();
            long cookie = in.readLong();
            int len = in.readInt();
            byte[] payload = new byte[len];
            in.readFully(payload);
            java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(payload);
            int[] p = pending.get(cookie);
            if (p == null) {
                throw new IOException("chunk for unknown cookie " + cookie);
            }
            if (type == Nbd.REPLY_TYPE_OFFSET_DATA) {
                long off = b.getLong();
                if (data == null) {
                    data = new byte[p[1]];
                }
                b.get(data, 0, len - 8);
            } else if (type == Nbd.REPLY_TYPE_BLOCK_STATUS) {
                b.getInt();
                extents = new ArrayList<>();
                while (b.hasRemaining()) {
                    extents.add(new int[] {b.getInt(), b.getInt()});
                }
            } else if (type == Nbd.REPLY_TYPE_ERROR) {
                error = b.getInt();
                int ml = b.getShort() & 0xffff;
                message = new String(payload, 6, ml, StandardCharsets.UTF_8);
            } else if (type != Nbd.REPLY_TYPE_NONE) {
                throw new IOException("unexpected chunk type " + type);
            }
            if ((flags & Nbd.REPLY_FLAG_DONE) != 0) {
                pending.remove(cookie);
                return new Reply(cookie, error, data, extents, message);
            }
            // more chunks of this reply follow; (this server sends one, so this is not reached)
            int next = in.readInt();
            if (next != Nbd.STRUCTURED_REPLY_MAGIC) {
                throw new IOException("bad chunk magic");
            }
        }
    }

    Reply call(int type, int flags, long offset, long length, byte[] payload) throws IOException {
        long cookie = System.nanoTime();
        request(type, flags, cookie, offset, length, payload);
        flushOut();
        return readReply();
    }

    byte[] read(long offset, int length) throws IOException {
        Reply r = call(Nbd.CMD_READ, 0, offset, length, null);
        if (r.error() != 0) {
            throw new IOException("read failed: " + r.error() + " " + r.message());
        }
        return r.data();
    }

    void write(long offset, byte[] data) throws IOException {
        Reply r = call(Nbd.CMD_WRITE, 0, offset, data.length, data);
        if (r.error() != 0) {
            throw new IOException("write failed: " + r.error());
        }
    }

    void flush() throws IOException {
        Reply r = call(Nbd.CMD_FLUSH, 0, 0, 0, null);
        if (r.error() != 0) {
            throw new IOException("flush failed: " + r.error());
        }
    }

    void disconnect() throws IOException {
        request(Nbd.CMD_DISC, 0, 0, 0, 0, null);
        flushOut();
    }

    /** True once the server has closed the connection (reads EOF within the socket timeout). */
    boolean closedByServer() {
        try {
            return in.read() < 0;
        } catch (IOException e) {
            return true;
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
