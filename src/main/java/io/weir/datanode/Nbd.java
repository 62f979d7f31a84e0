package io.weir.datanode;

/**
 * The constants of the NBD protocol that this server speaks: magic numbers, handshake and
 * transmission flags, options, option replies, commands, structured reply types and errors, as
 * the NBD project's protocol document ({@code doc/proto.md}) defines them. All values are sent in
 * network byte order.
 */
final class Nbd {

    private Nbd() {
    }

    // --- handshake -----------------------------------------------------------------------------

    /** "NBDMAGIC": the first eight bytes the server sends. */
    static final long NBDMAGIC = 0x4e42444d41474943L;
    /** "IHAVEOPT": the newstyle magic, sent by the server and before every client option. */
    static final long IHAVEOPT = 0x49484156454F5054L;
    /** Magic of every option reply. */
    static final long OPTION_REPLY_MAGIC = 0x3e889045565a9L;

    /** Handshake flag: the server speaks fixed newstyle. */
    static final int FLAG_FIXED_NEWSTYLE = 1;
    /** Handshake flag: the server can leave out the 124 zero bytes after NBD_OPT_EXPORT_NAME. */
    static final int FLAG_NO_ZEROES = 1 << 1;
    /** Client flag: the client speaks fixed newstyle. */
    static final int FLAG_C_FIXED_NEWSTYLE = 1;
    /** Client flag: the client wants no 124 zero bytes. */
    static final int FLAG_C_NO_ZEROES = 1 << 1;

    static final int OPT_EXPORT_NAME = 1;
    static final int OPT_ABORT = 2;
    static final int OPT_LIST = 3;
    static final int OPT_STARTTLS = 5;
    static final int OPT_INFO = 6;
    static final int OPT_GO = 7;
    static final int OPT_STRUCTURED_REPLY = 8;
    static final int OPT_LIST_META_CONTEXT = 9;
    static final int OPT_SET_META_CONTEXT = 10;

    static final int REP_ACK = 1;
    static final int REP_SERVER = 2;
    static final int REP_INFO = 3;
    static final int REP_META_CONTEXT = 4;
    static final int REP_ERR_UNSUP = 0x80000000 | 1;
    static final int REP_ERR_POLICY = 0x80000000 | 2;
    static final int REP_ERR_INVALID = 0x80000000 | 3;
    static final int REP_ERR_TLS_REQD = 0x80000000 | 5;
    static final int REP_ERR_UNKNOWN = 0x80000000 | 6;
    static final int REP_ERR_SHUTDOWN = 0x80000000 | 7;
    static final int REP_ERR_TOO_BIG = 0x80000000 | 9;

    static final int INFO_EXPORT = 0;
    static final int INFO_NAME = 1;
    static final int INFO_DESCRIPTION = 2;
    static final int INFO_BLOCK_SIZE = 3;

    // --- transmission flags (per export) --------------------------------------------------------

    static final int FLAG_HAS_FLAGS = 1;
    static final int FLAG_READ_ONLY = 1 << 1;
    static final int FLAG_SEND_FLUSH = 1 << 2;
    static final int FLAG_SEND_FUA = 1 << 3;
    static final int FLAG_SEND_TRIM = 1 << 5;
    static final int FLAG_SEND_WRITE_ZEROES = 1 << 6;
    static final int FLAG_SEND_DF = 1 << 7;
    static final int FLAG_CAN_MULTI_CONN = 1 << 8;
    static final int FLAG_SEND_CACHE = 1 << 10;

    // --- transmission ---------------------------------------------------------------------------

    static final int REQUEST_MAGIC = 0x25609513;
    static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    static final int STRUCTURED_REPLY_MAGIC = 0x668e33ef;

    /** Size of a request header: magic, flags, type, cookie, offset, length. */
    static final int REQUEST_HEADER_BYTES = 28;
    /** Size of a simple reply header: magic, error, cookie. */
    static final int SIMPLE_REPLY_BYTES = 16;
    /** Size of a structured reply chunk header: magic, flags, type, cookie, length. */
    static final int CHUNK_HEADER_BYTES = 20;

    static final int CMD_READ = 0;
    static final int CMD_WRITE = 1;
    static final int CMD_DISC = 2;
    static final int CMD_FLUSH = 3;
    static final int CMD_TRIM = 4;
    static final int CMD_CACHE = 5;
    static final int CMD_WRITE_ZEROES = 6;
    static final int CMD_BLOCK_STATUS = 7;

    static final int CMD_FLAG_FUA = 1;
    static final int CMD_FLAG_NO_HOLE = 1 << 1;
    static final int CMD_FLAG_DF = 1 << 2;
    static final int CMD_FLAG_REQ_ONE = 1 << 3;
    static final int CMD_FLAG_FAST_ZERO = 1 << 4;

    static final int REPLY_FLAG_DONE = 1;
    static final int REPLY_TYPE_NONE = 0;
    static final int REPLY_TYPE_OFFSET_DATA = 1;
    static final int REPLY_TYPE_BLOCK_STATUS = 5;
    static final int REPLY_TYPE_ERROR = (1 << 15) | 1;

    /** The one metadata context, base:allocation, and the id this server gives it. */
    static final String BASE_ALLOCATION = "base:allocation";
    static final int BASE_ALLOCATION_ID = 1;
    static final int STATE_HOLE = 1;
    static final int STATE_ZERO = 1 << 1;

    // --- errors (errno values as the protocol defines them) -------------------------------------

    static final int EPERM = 1;
    static final int EIO = 5;
    static final int ENOMEM = 12;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;
    static final int EOVERFLOW = 75;
    static final int ENOTSUP = 95;
    static final int ESHUTDOWN = 108;

    /** Longest string the protocol allows in a reply, in bytes: an error message, a name. */
    static final int MAX_STRING_BYTES = 4096;

    /**
     * An error message as a reply carries it: UTF-8, cut to {@link #MAX_STRING_BYTES} at a
     * character's boundary (a message may repeat a name the client sent, itself up to that long).
     */
    static byte[] message(String message) {
        byte[] m = message == null ? new byte[0] : message.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        if (m.length <= MAX_STRING_BYTES) {
            return m;
        }
        int end = MAX_STRING_BYTES;
        while ((m[end] & 0xC0) == 0x80) { // m[end] continues the character before it: cut in front of that one
            end--;
        }
        return java.util.Arrays.copyOf(m, end);
    }

    /**
     * The NBD error for a failed store operation: {@link #ENOSPC} for a full disk or quota, or a
     * file grown past its limit, as the protocol asks (a client such as qemu pauses its guest on
     * ENOSPC rather than fail its IO); {@link #ENOTSUP} for a hole the file system cannot punch
     * (qemu then writes the zeroes, as a client's writes that QoS charges); {@link #EIO} for anything else. The JDK reports errno only
     * in the message ({@code strerror}'s words), so that is what is matched; a native call's
     * failure (a hole punch) carries its errno.
     */
    static int errorOf(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof com.sun.jna.LastErrorException e) {
                int errno = e.getErrorCode();
                if (errno == 28 || errno == 122 || errno == 27) { // ENOSPC, EDQUOT, EFBIG
                    return ENOSPC;
                }
                if (errno == 95) { // EOPNOTSUPP: a file system that cannot punch holes; the client writes zeroes itself
                    return ENOTSUP;
                }
            }
            String m = t.getMessage();
            if (t instanceof java.io.IOException && m != null && (m.contains("No space left on device")
                    || m.contains("Disk quota exceeded") || m.contains("File too large"))) {
                return ENOSPC;
            }
        }
        return EIO;
    }
}
