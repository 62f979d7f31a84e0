package io.weir.datanode;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.zip.CRC32C;

/**
 * The storage of one volume: a sparse file of the volume's size, read and written with
 * positional IO, and beside it a file of per-block checksums.
 *
 * <h2>Files</h2>
 * <ul>
 *   <li>{@code <id>.img}: the data, exactly the volume's size, sparse. Holes are real: a trim
 *       ({@linkplain #trim deferred}, see below) or a write of zeroes deallocates blocks with
 *       {@code fallocate(PUNCH_HOLE)}, and {@link #blockStatus} reports holes from
 *       {@code lseek(SEEK_DATA/SEEK_HOLE)}.</li>
 *   <li>{@code <id>.crc}: one CRC32C per {@value #BLOCK}-byte block ({@link ChecksumFile}).
 *       Written with the data; {@link #scrub} verifies it.</li>
 *   <li>{@code <id>.rep}, on the primary of a replicated volume: the in-sync set it last reported
 *       ({@link SyncState}).</li>
 * </ul>
 * Files are created by {@link #create} and opened lazily on first use, so that a node can hold
 * many thousands of configured volumes without as many open descriptors.
 *
 * <h2>Closing while the files are in use</h2>
 * Every operation on the files (client IO, scrub, gc, flush) holds a <em>pin</em> on them for its
 * whole length: it pins before it looks at the channel or the raw descriptor and unpins when it
 * is done. {@link #close} only marks the volume closed; the descriptors are closed when the last
 * pin is released (at once if there is none). So a descriptor number is never used after it is
 * closed, when the kernel may already have given it to another volume's file, and an operation
 * that starts after {@code close} fails with {@link VolumeClosedException} before it touches
 * anything.
 *
 * <h2>Trims are reclaimed by gc</h2>
 * {@link #trim} only records the range; the {@code gc} background task punches it later
 * ({@link #gcStep}). NBD lets a trimmed range read back anything until it is written again, so
 * this is invisible to clients, and it moves the cost of deallocation to a task with its own CPU
 * share. A write (or write of zeroes) into a recorded range removes that part first, so gc never
 * punches data written after the trim.
 *
 * <h2>Locking</h2>
 * Writes hold the {@linkplain #STRIPES striped} locks of the blocks they touch while they write
 * data and checksums, so that a block's checksum always describes its last write; scrub holds a
 * block's stripe while it verifies it; gc holds every stripe while it punches. Reads take no lock
 * (NBD does not order overlapping requests in flight). Lock order: stripes in ascending index,
 * then the {@link TrimRanges}, then {@code openLock}.
 */
final class VolumeStore implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(VolumeStore.class.getName());

    /** Checksum block size, also the filesystem's allocation granularity on usual setups. */
    static final int BLOCK = 4096;
    /** Number of block lock stripes per volume. */
    static final int STRIPES = 64;
    /** Largest range one gc step punches. */
    static final long GC_STEP_BYTES = 64L << 20;
    /** Blocks one scrub step verifies. */
    static final int SCRUB_STEP_BLOCKS = 64;

    final String id;
    volatile String exportName;
    /**
     * The tenant it belongs to, whose client certificates see it over TLS: by id, since a
     * tenant's name, which its export name starts with, may change (null in tests without one).
     */
    volatile java.util.UUID tenantId;
    /**
     * Bytes of the buffers this volume's NBD requests took from the node's budget (write
     * payloads, read replies), over all its connections, from when a request is read until its
     * buffer is released or handed to its reply: its share of the budget
     * ({@link BufferPool#tryAcquire(int, long)}).
     */
    final java.util.concurrent.atomic.AtomicLong requestBytes = new java.util.concurrent.atomic.AtomicLong();
    /** Whether its files existed before this process took the volume (a restart), not made by it. */
    volatile boolean fromEarlierRun;
    /** Its replication when the volume has several copies ({@link Replication#configure}), else null. */
    volatile ReplicatedVolume replication;
    private final Path data;
    private final Path checksums;
    private volatile long size;

    /** Guards opening and closing the files, and {@link #fd} (tests hold it to make an open slow). */
    final Object openLock = new Object();
    private volatile FileChannel channel;
    /** The raw descriptor for fallocate and lseek; written before {@link #channel}, read under a pin. */
    private int fd = -1;
    /** Operations using the files now; see "Closing while the files are in use". */
    private final AtomicInteger pins = new AtomicInteger();
    /** Set once the descriptors are closed (guarded by {@code openLock}). */
    private boolean filesClosed;
    /** The checksum file's mapping, replaced whole when a resize extends it. */
    private volatile ChecksumFile sums;

    private final ReentrantLock[] stripes = new ReentrantLock[STRIPES];
    /** Pending trims, which the gc task deallocates. */
    private final TrimRanges trims = new TrimRanges();
    /** Set once the data dir was synced after this object's files were made or adopted ({@link #force}). */
    private volatile boolean entriesDurable;
    /** Bytes written since the last {@link #flush} or {@link #destage}; the flush task's signal. */
    final AtomicLong dirtyBytes = new AtomicLong();
    /** Times the data was forced to the disk ({@link #flush}, FUA); for tests. */
    private final java.util.concurrent.atomic.LongAdder forced = new java.util.concurrent.atomic.LongAdder();
    /** Blocks verified by scrub, and those that did not match their checksum. */
    final AtomicLong scrubbedBlocks = new AtomicLong();
    final AtomicLong checksumMismatches = new AtomicLong();
    /** Set by {@link #close}: no new pin is granted; the files close with the last pin. */
    private volatile boolean closed;
    /** {@link #delete} closes it: its files are not forced first. */
    private volatile boolean deleting;
    /** Connections in the transmission phase on this volume. */
    final Set<NbdConnection> clients = ConcurrentHashMap.newKeySet();
    /** Set once the volume leaves the configuration; no new connection may attach. */
    volatile boolean removed;
    /** The flush task's pass that last destaged this volume (written by flush steps only, one at a time). */
    int flushPass = -1;
    /** Run once, when the files are first opened (under {@code openLock}); null for none. */
    volatile Runnable onOpen;

    /**
     * Tests: a store slower than the CPU. Runs on the worker before each read and write of data
     * ({@link #read}, {@link #write}), as a synchronous device's service time would hold it; null
     * (nothing added) unless the node was built with one. Set before the volume is published.
     */
    interface ServiceTime {
        void serve(long bytes);
    }

    ServiceTime serviceTime;

    private VolumeStore(String id, String exportName, Path dir, long size) {
        this.id = id;
        this.exportName = exportName;
        this.data = dir.resolve(id + ".img");
        this.checksums = dir.resolve(id + ".crc");
        this.size = size;
        for (int i = 0; i < STRIPES; i++) {
            stripes[i] = new ReentrantLock();
        }
    }

    /**
     * Creates (or adopts, keeping its data) the files of a volume and returns it, not yet open.
     * An existing file smaller than {@code size} grows; a larger one keeps its size on disk but
     * the volume serves {@code size} bytes.
     */
    static VolumeStore create(Path dir, String id, String exportName, long size) throws IOException {
        VolumeStore v = new VolumeStore(id, exportName, dir, size);
        if (!Files.exists(v.data) && Files.deleteIfExists(v.tokenFile())) {
            // a new file holds none of the data a primary gave the one it replaces: its token
            // goes first (durably), so that a crash cannot leave the token beside the new file
            DurableFiles.forceDirectory(dir);
        }
        try (RandomAccessFile f = new RandomAccessFile(v.data.toFile(), "rw")) {
            if (f.length() < size) {
                f.setLength(size);
            }
        }
        return v;
    }

    long size() {
        return size;
    }

    Path dataFile() {
        return data;
    }

    /** The file of the token a primary gave this volume's data file as its copy ({@link #copyToken}). */
    static final String TOKEN_SUFFIX = ".tok";

    /** {@link #copyToken}, once read: -1 until then. */
    private volatile long copyToken = -1;
    private final Object tokenLock = new Object();

    private Path tokenFile() {
        return data.resolveSibling(id + TOKEN_SUFFIX);
    }

    /**
     * The token the primary of this replicated volume gave this node's data file when it took it
     * as its copy ({@link #adoptToken}), or 0 for none: a file made since (its data lost, the disk
     * replaced) has none, and holds none of what the primary sent the file before
     * ({@link ReplicatedVolume}, rule 8).
     */
    long copyToken() {
        long t = copyToken;
        return t >= 0 ? t : readToken();
    }

    /** {@link #copyToken} the first time: from its file, unless an adoption put one in meanwhile. */
    private long readToken() {
        synchronized (tokenLock) {
            long t = copyToken;
            if (t >= 0) {
                return t;
            }
            try {
                t = Long.parseLong(Files.readString(tokenFile()).strip());
            } catch (java.nio.file.NoSuchFileException e) {
                t = 0;
            } catch (NumberFormatException e) {
                LOG.log(Level.WARNING, "volume " + exportName + ": its copy token is unreadable (" + e
                        + "); its primary will copy it whole");
                t = 0;
            } catch (IOException e) { // perhaps passing: not kept, read again next time
                LOG.log(Level.WARNING, "volume " + exportName + ": its copy token cannot be read now: " + e);
                return 0;
            }
            copyToken = t;
            return t;
        }
    }

    /** Keeps {@code token} as the data file's copy token, durably, before it is answered for. */
    void adoptToken(long token) throws IOException {
        synchronized (tokenLock) {
            DurableFiles.replace(tokenFile(), token + "\n");
            copyToken = token;
        }
    }

    /** Where a replicated volume's primary keeps the in-sync set it last reported ({@link SyncState}). */
    Path syncStateFile() {
        return data.resolveSibling(id + SyncState.SUFFIX);
    }

    /** Grows the volume; growing keeps the data. Shrinking is refused. */
    void resize(long newSize) throws IOException {
        growFile(newSize);
        commitSize(newSize);
    }

    /**
     * The fallible half of a resize: grows the data file on disk to at least {@code newSize}
     * (sparse, data kept). Clients see no change: the volume still serves its old size. Shrinking is
     * refused.
     */
    void growFile(long newSize) throws IOException {
        if (newSize < size) {
            throw new IllegalArgumentException("volume " + exportName + " cannot shrink from " + size + " to " + newSize);
        }
        synchronized (openLock) {
            try (RandomAccessFile f = new RandomAccessFile(data.toFile(), "rw")) {
                if (f.length() < newSize) {
                    f.setLength(newSize);
                }
            }
        }
    }

    /**
     * The half of a resize that cannot fail, after {@link #growFile}: new connections see
     * {@code newSize}. If the checksum map cannot be extended, the blocks past the old end have no
     * checksums (scrub skips them) and a warning is logged.
     */
    void commitSize(long newSize) {
        synchronized (openLock) {
            long old = size;
            size = newSize;
            boolean open = channel != null && !filesClosed;
            if (open) {
                try {
                    mapChecksums();
                } catch (IOException | RuntimeException e) {
                    LOG.log(Level.WARNING, "volume " + exportName + ": checksums not extended to " + newSize
                            + " bytes: " + e);
                }
            }
            if (old % BLOCK != 0 && newSize > old) {
                forgetTailChecksum(old / BLOCK, open);
            }
        }
    }

    /**
     * Caller holds {@code openLock}: the old last block, partial, had its checksum over the bytes
     * up to the old end; it now runs further, and scrub would find it corrupt. It is unverified
     * until next written.
     */
    private void forgetTailChecksum(long block, boolean open) {
        ReentrantLock l = stripes[(int) (block % STRIPES)];
        l.lock();
        try {
            ChecksumFile s = open ? sums : ChecksumFile.map(checksums, size);
            if (s != null && block < s.blocks()) {
                s.put(block, 0);
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.WARNING, "volume " + exportName + ": the checksum of block " + block + " is stale after a resize: " + e);
        } finally {
            l.unlock();
        }
    }

    /**
     * Pins the files (opening them on first use) and returns the channel; the caller must
     * {@link #unpin} exactly once, in a {@code finally}.
     *
     * @throws VolumeClosedException if the volume is closed (then nothing is pinned)
     */
    private FileChannel pin() throws IOException {
        pins.incrementAndGet();
        if (closed) {
            unpin();
            throw new VolumeClosedException(exportName);
        }
        try {
            return channel();
        } catch (IOException | RuntimeException e) {
            unpin();
            throw e;
        }
    }

    /** Releases a pin; the last one after {@link #close} closes the files. */
    private void unpin() {
        if (pins.decrementAndGet() == 0 && closed) {
            closeFiles();
        }
    }

    /** Caller holds a pin. */
    private FileChannel channel() throws IOException {
        FileChannel c = channel;
        if (c != null) {
            return c;
        }
        synchronized (openLock) {
            if (closed) {
                throw new VolumeClosedException(exportName);
            }
            if (channel == null) {
                FileChannel ch = FileChannel.open(data, StandardOpenOption.READ, StandardOpenOption.WRITE);
                try {
                    fd = LinuxFiles.open(data.toString(), LinuxFiles.O_RDWR | LinuxFiles.O_CLOEXEC);
                } catch (RuntimeException e) {
                    ch.close();
                    throw new IOException("cannot open " + data + " for hole punching: " + e.getMessage(), e);
                }
                try {
                    mapChecksums();
                } catch (IOException | RuntimeException e) {
                    // not open after all: the next use tries again, and the volume is not half-open
                    ch.close();
                    LinuxFiles.close(fd);
                    fd = -1;
                    throw e;
                }
                channel = ch;
                Runnable r = onOpen;
                if (r != null) {
                    r.run();
                }
            }
            return channel;
        }
    }

    /** Caller holds {@code openLock}. */
    private void mapChecksums() throws IOException {
        sums = ChecksumFile.map(checksums, size);
    }

    /** The raw descriptor; caller holds a pin. */
    private int fd() throws IOException {
        channel();
        return fd;
    }

    /** True once the files are open (after the first connection or {@link #open}) and until closed. */
    boolean isOpen() {
        return channel != null && !closed;
    }

    /** True once the volume is closed and its descriptors too (no operation holds them any more). */
    boolean filesClosed() {
        synchronized (openLock) {
            return filesClosed || closed && channel == null;
        }
    }

    /**
     * Opens the files now (they are otherwise opened at first use).
     *
     * @throws VolumeClosedException if the volume is closed
     */
    void open() throws IOException {
        pin();
        unpin();
    }

    // --- IO -------------------------------------------------------------------------------------

    /** Reads {@code dst.remaining()} bytes at {@code offset}; past the file's end reads zeroes. */
    void read(long offset, ByteBuffer dst) throws IOException {
        if (serviceTime != null) {
            serviceTime.serve(dst.remaining());
        }
        FileChannel c = pin();
        try {
            long p = offset;
            while (dst.hasRemaining()) {
                int n = c.read(dst, p);
                if (n < 0) {
                    while (dst.hasRemaining()) {
                        dst.put((byte) 0);
                    }
                    return;
                }
                p += n;
            }
        } finally {
            unpin();
        }
    }

    /** Writes {@code src} (position to limit) at {@code offset}, with checksums; forces if {@code fua}. */
    void write(long offset, ByteBuffer src, boolean fua) throws IOException {
        int len = src.remaining();
        if (len == 0) {
            return;
        }
        if (serviceTime != null) {
            serviceTime.serve(len);
        }
        FileChannel c = pin();
        try {
            long first = offset / BLOCK;
            long last = (offset + len - 1) / BLOCK;
            lock(first, last);
            try {
                if (trims.pendingBytes() > 0) {
                    trims.cancel(offset, offset + len);
                }
                int start = src.position();
                long p = offset;
                try {
                    while (src.hasRemaining()) {
                        p += c.write(src, p);
                    }
                    updateChecksums(offset, src, start, len);
                } catch (IOException | RuntimeException e) {
                    // some of it may be in the file: its blocks are unverified, not held to what they were
                    clearChecksums(offset, offset + len);
                    throw e;
                }
            } finally {
                unlock(first, last);
            }
            dirtyBytes.addAndGet(len);
            if (fua) {
                flush();
            }
        } finally {
            unpin();
        }
    }

    /** Caller holds a pin and the stripes of the blocks. */
    private void updateChecksums(long offset, ByteBuffer src, int start, int len) throws IOException {
        ChecksumFile sums = this.sums;
        long end = offset + len;
        CRC32C c = new CRC32C();
        for (long b = offset / BLOCK; b * BLOCK < end; b++) {
            if (b >= sums.blocks()) {
                return;
            }
            long bs = b * BLOCK;
            int blockLen = (int) Math.min(BLOCK, size - bs);
            c.reset();
            if (bs >= offset && bs + blockLen <= end) {
                int at = start + (int) (bs - offset);
                src.limit(at + blockLen).position(at);
                c.update(src);
            } else {
                ByteBuffer scratch = SCRATCH.get();
                scratch.clear().limit(blockLen);
                read(bs, scratch);
                scratch.flip();
                c.update(scratch);
            }
            sums.put(b, (int) c.getValue());
        }
        src.limit(start + len).position(start + len);
    }

    private static final ThreadLocal<ByteBuffer> SCRATCH = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(BLOCK));

    /**
     * Makes {@code [offset, offset + length)} read as zeroes: punches a hole, or (with
     * {@code noHole}) writes zeroes so the range stays allocated.
     */
    void writeZeroes(long offset, long length, boolean noHole, boolean fua) throws IOException {
        if (length == 0) {
            return;
        }
        if (noHole && serviceTime != null) {
            serviceTime.serve(length);
        }
        pin();
        try {
            int f = fd();
            long first = offset / BLOCK;
            long last = (offset + length - 1) / BLOCK;
            lock(first, last);
            try {
                if (trims.pendingBytes() > 0) {
                    trims.cancel(offset, offset + length);
                }
                // first: zeroes that fail halfway leave those blocks unverified, not with the
                // checksums of what they held, which scrub would count as corrupt on every pass
                clearChecksums(offset, offset + length);
                if (noHole) {
                    writeZeroBuffers(offset, length);
                } else {
                    holePuncher.punch(f, offset, length); // a full disk is ENOSPC to the client (Nbd.errorOf)
                }
            } finally {
                unlock(first, last);
            }
            dirtyBytes.addAndGet(Math.min(length, BLOCK));
            if (fua) {
                flush();
            }
        } finally {
            unpin();
        }
    }

    /** Zeroes written for real (unwritten extents from fallocate would report as holes on ext4). */
    private static final ByteBuffer ZEROES = ByteBuffer.allocateDirect(1 << 20).asReadOnlyBuffer();

    /** Caller holds a pin. */
    private void writeZeroBuffers(long offset, long length) throws IOException {
        FileChannel c = channel();
        long p = offset;
        long end = offset + length;
        ByteBuffer z = ZEROES.duplicate();
        while (p < end) {
            z.clear().limit((int) Math.min(z.capacity(), end - p));
            while (z.hasRemaining()) {
                p += c.write(z, p);
            }
        }
    }

    private void clearChecksums(long from, long to) {
        sums.clear(from, to);
    }

    /**
     * Records a trim; {@link #gcStep} deallocates it later. Only the whole blocks in the range
     * count (a trim is advisory, and a partial block could only be zeroed, not deallocated), so a
     * volume holds at most one pending range per two blocks however clients trim.
     */
    void trim(long offset, long length) {
        long start = (offset + BLOCK - 1) / BLOCK * BLOCK;
        long end = (offset + length) / BLOCK * BLOCK;
        if (end <= start) {
            return;
        }
        trims.add(start, end);
    }

    /** Bytes trimmed and not yet reclaimed by gc. */
    long pendingTrimBytes() {
        return trims.pendingBytes();
    }

    /** Times the data was forced to the disk. */
    long forced() {
        return forced.sum();
    }

    /** Makes everything written so far durable: data and checksums. */
    void flush() throws IOException {
        FileChannel c = pin();
        try {
            force(c);
        } finally {
            unpin();
        }
    }

    /**
     * Starts writing back the data written so far and returns without waiting for the disk: the
     * flush task's step, which leaves less for the next {@link #flush} to write. Not a durability
     * point (that is {@link #flush}, for client FLUSH and FUA): waiting here, as a
     * {@code force} does, would hold a scheduler worker idle for the disk's time while the
     * scheduler charges the flush task only the CPU it used. The checksum map (1/1024 of the
     * data) is left to {@link #flush} and the kernel's own write-back.
     */
    void destage() throws IOException {
        pin();
        try {
            int f = fd();
            dirtyBytes.set(0);
            LinuxFiles.startWriteback(f); // its failures surface at the next force
        } finally {
            unpin();
        }
    }

    /** Remembers the first failure to write the volume to its disk, and says so once, at ERROR. */
    private synchronized void failedToForce(IOException e) {
        if (forceFailure == null) {
            forceFailure = e;
            LOG.log(Level.ERROR, "volume " + exportName + " could not be written to its disk (" + e.getMessage()
                    + "): every later FLUSH and FUA write fails until the node restarts");
        }
    }

    /** How the data file is forced to the disk: fdatasync; tests make it fail. */
    interface DiskSync {
        void force(FileChannel c) throws IOException;
    }

    /** How a range is deallocated: fallocate's punch; tests make it fail. */
    interface HolePuncher {
        void punch(int fd, long offset, long length);
    }

    /** Tests: how WRITE_ZEROES punches its hole. */
    volatile HolePuncher holePuncher = LinuxFiles::punchHole;

    /** Tests: how the data file is forced. */
    volatile DiskSync dataSync = c -> c.force(false);
    /** Tests: how the checksum map is forced (msync; the JDK reports its failure unchecked). */
    volatile java.util.function.Consumer<ChecksumFile> checksumSync = ChecksumFile::force;

    /**
     * The first failure to force the files or to write them back: what it covered may not be on
     * the disk, and Linux reports it once per open file and then marks the pages clean, so a later
     * fdatasync succeeds without them. Every later {@link #flush} fails with it, for this run.
     */
    private volatile IOException forceFailure;

    /**
     * Caller holds a pin or {@code openLock} with the files open. Fails, for good, once forcing or
     * write-back has failed ({@link #forceFailure}).
     */
    private void force(FileChannel c) throws IOException {
        IOException failed = forceFailure;
        if (failed != null) {
            throw new IOException("volume " + exportName + " could not be written to its disk earlier (" + failed.getMessage()
                    + "): writes acknowledged before that may be lost, and none is durable until the node restarts", failed);
        }
        dirtyBytes.set(0);
        try {
            dataSync.force(c);
            forced.increment();
            ChecksumFile sums = this.sums;
            if (sums != null) {
                checksumSync.accept(sums);
            }
        } catch (IOException e) {
            failedToForce(e);
            throw e;
        } catch (UncheckedIOException e) { // a failed msync of the checksum map
            failedToForce(e.getCause());
            throw e.getCause();
        }
        if (!entriesDurable) {
            // The files' directory entries: a volume created (or moved back from orphans/) since
            // the node started would otherwise be lost whole in a power cut, flushed data and all.
            DurableFiles.forceDirectory(data.getParent());
            entriesDurable = true;
        }
    }

    /**
     * Writes block status descriptors (length, flags) for {@code [offset, offset + length)} into
     * {@code out} while it has room; at most one if {@code reqOne}. Holes are reported as
     * {@code HOLE | ZERO}, everything else as data.
     *
     * @return the number of descriptors written (at least one when {@code length > 0})
     */
    int blockStatus(long offset, long length, boolean reqOne, ByteBuffer out) throws IOException {
        pin();
        try {
            return blockStatus(fd(), offset, length, reqOne, out);
        } finally {
            unpin();
        }
    }

    private int blockStatus(int f, long offset, long length, boolean reqOne, ByteBuffer out) {
        long end = Math.min(offset + length, size);
        long pos = offset;
        int n = 0;
        while (pos < end && out.remaining() >= 8) {
            long d = LinuxFiles.nextData(f, pos);
            long next;
            int flags;
            if (d < 0 || d >= end) {
                next = end;
                flags = Nbd.STATE_HOLE | Nbd.STATE_ZERO;
            } else if (d > pos) {
                next = d;
                flags = Nbd.STATE_HOLE | Nbd.STATE_ZERO;
            } else {
                next = Math.min(LinuxFiles.nextHole(f, pos), end);
                flags = 0;
                if (next <= pos) {
                    next = end; // file shorter than the volume: the rest reads as zeroes but is reported as data
                }
            }
            out.putInt((int) (next - pos)).putInt(flags);
            n++;
            pos = next;
            if (reqOne) {
                break;
            }
        }
        return n;
    }

    /**
     * Bytes allocated in the volume's file within its size: the sum of its data extents, found
     * with {@code SEEK_DATA}/{@code SEEK_HOLE} as {@link #blockStatus} finds them. A volume nobody
     * has opened is read through a descriptor of this call's own and stays closed: the node
     * reports this every second, and opening would keep every volume's files and checksum mapping
     * open and give each to the background tasks.
     */
    long allocatedBytes() throws IOException {
        if (!isOpen()) {
            int f = LinuxFiles.open(data.toString(), LinuxFiles.O_RDONLY | LinuxFiles.O_CLOEXEC);
            try {
                return allocatedBytes(f, size);
            } finally {
                LinuxFiles.close(f);
            }
        }
        pin();
        try {
            return allocatedBytes(fd(), size);
        } finally {
            unpin();
        }
    }

    private static long allocatedBytes(int f, long end) {
        long pos = 0;
        long used = 0;
        while (pos < end) {
            long d = LinuxFiles.nextData(f, pos);
            if (d < 0 || d >= end) {
                break;
            }
            long h = Math.min(LinuxFiles.nextHole(f, d), end);
            if (h <= d) {
                used += end - d; // file shorter than the volume: counted as blockStatus reports it
                break;
            }
            used += h - d;
            pos = h;
        }
        return used;
    }

    // --- background work ------------------------------------------------------------------------

    /** Blocks in the volume (the last may be partial). */
    long blocks() {
        return (size + BLOCK - 1) / BLOCK;
    }

    /**
     * Verifies the data blocks in {@code [fromBlock, toBlock)} against their checksums, skipping
     * holes and blocks whose checksum is not known. Safe to call from several threads at once.
     *
     * @return the number of blocks verified
     */
    int scrub(long fromBlock, long toBlock) throws IOException {
        pin();
        try {
            return scrub(fd(), fromBlock, toBlock);
        } finally {
            unpin();
        }
    }

    private int scrub(int f, long fromBlock, long toBlock) throws IOException {
        ByteBuffer buf = SCRATCH.get();
        CRC32C c = new CRC32C();
        ChecksumFile sums = this.sums;
        long end = Math.min(toBlock, Math.min(blocks(), sums.blocks()));
        int verified = 0;
        long dataEnd = 0; // the end of the data extent the cursor is in: one lseek pair per extent, not per block
        for (long b = fromBlock; b < end; b++) {
            if (b * BLOCK >= dataEnd) {
                long d = LinuxFiles.nextData(f, b * BLOCK);
                if (d < 0 || d >= end * BLOCK) {
                    break;
                }
                b = Math.max(b, d / BLOCK);
                dataEnd = LinuxFiles.nextHole(f, b * BLOCK);
            }
            int blockLen = (int) Math.min(BLOCK, size - b * BLOCK);
            ReentrantLock l = stripes[(int) (b % STRIPES)];
            l.lock();
            try {
                int stored = sums.get(b);
                if (stored != 0) {
                    buf.clear().limit(blockLen);
                    read(b * BLOCK, buf);
                    buf.flip();
                    c.reset();
                    c.update(buf);
                    verified++;
                    if ((int) c.getValue() != stored) {
                        checksumMismatches.incrementAndGet();
                        LOG.log(Level.WARNING, "scrub: volume {0} block {1} does not match its checksum", exportName, b);
                    }
                }
            } finally {
                l.unlock();
            }
        }
        scrubbedBlocks.addAndGet(verified);
        return verified;
    }

    /**
     * Punches the first pending trim (up to {@value #GC_STEP_BYTES} bytes of it), holding every
     * stripe. Returns the bytes reclaimed, 0 if nothing was pending.
     */
    long gcStep() throws IOException {
        if (trims.pendingBytes() == 0) {
            return 0;
        }
        pin();
        try {
            return gcStep(fd());
        } finally {
            unpin();
        }
    }

    private long gcStep(int f) {
        lockAll();
        try {
            TrimRanges.Range r = trims.takeFirst(GC_STEP_BYTES);
            if (r == null) {
                return 0;
            }
            long to = Math.min(r.end(), size);
            if (to > r.start()) {
                LinuxFiles.punchHole(f, r.start(), to - r.start());
                clearChecksums(r.start(), to);
            }
            return r.length();
        } finally {
            unlockAll();
        }
    }

    // --- locks ----------------------------------------------------------------------------------

    private void lock(long firstBlock, long lastBlock) {
        if (firstBlock == lastBlock) {
            stripes[(int) (firstBlock % STRIPES)].lock();
        } else if (lastBlock - firstBlock + 1 >= STRIPES) {
            lockAll();
        } else {
            int a = (int) (firstBlock % STRIPES);
            int z = (int) (lastBlock % STRIPES);
            for (int i = 0; i < STRIPES; i++) {
                if (a <= z ? (i >= a && i <= z) : (i >= a || i <= z)) {
                    stripes[i].lock();
                }
            }
        }
    }

    private void unlock(long firstBlock, long lastBlock) {
        if (firstBlock == lastBlock) {
            stripes[(int) (firstBlock % STRIPES)].unlock();
        } else if (lastBlock - firstBlock + 1 >= STRIPES) {
            unlockAll();
        } else {
            int a = (int) (firstBlock % STRIPES);
            int z = (int) (lastBlock % STRIPES);
            for (int i = STRIPES - 1; i >= 0; i--) {
                if (a <= z ? (i >= a && i <= z) : (i >= a || i <= z)) {
                    stripes[i].unlock();
                }
            }
        }
    }

    /** Takes every stripe: blocks writes, zeroing, scrub and gc (tests use it to hold writes back). */
    void lockAll() {
        for (ReentrantLock l : stripes) {
            l.lock();
        }
    }

    /** True while some thread waits for a stripe (tests: a held-back write has reached its worker). */
    boolean writersWaiting() {
        for (ReentrantLock l : stripes) {
            if (l.hasQueuedThreads()) {
                return true;
            }
        }
        return false;
    }

    void unlockAll() {
        for (int i = STRIPES - 1; i >= 0; i--) {
            stripes[i].unlock();
        }
    }

    /**
     * Registers a connection entering transmission; false if the volume is being removed.
     * Paired with {@link #detach}.
     */
    boolean attach(NbdConnection c) {
        clients.add(c);
        if (removed) {
            clients.remove(c);
            return false;
        }
        return true;
    }

    void detach(NbdConnection c) {
        clients.remove(c);
    }

    // --- lifecycle ------------------------------------------------------------------------------

    /**
     * Closes the volume; idempotent, and it cannot be reopened. Operations started afterwards fail
     * with {@link VolumeClosedException}. The files are flushed and their descriptors closed now
     * if no operation holds them, else when the last one finishes (never blocks on them).
     */
    @Override
    public void close() {
        synchronized (openLock) {
            if (closed) {
                return;
            }
            closed = true;
        }
        if (pins.get() == 0) {
            closeFiles();
        }
    }

    /** Flushes (unless the files are being deleted) and closes the descriptors once; called with no pin held after {@link #close}. */
    private void closeFiles() {
        synchronized (openLock) {
            if (filesClosed) {
                return;
            }
            filesClosed = true;
            try {
                if (channel != null && !deleting) {
                    force(channel);
                }
            } catch (IOException e) {
                LOG.log(Level.WARNING, "closing volume " + exportName + ": " + e.getMessage());
            } finally {
                try {
                    if (channel != null) {
                        channel.close();
                    }
                } catch (IOException e) {
                    LOG.log(Level.WARNING, "closing volume " + exportName + ": " + e.getMessage());
                }
                if (fd >= 0) {
                    LinuxFiles.close(fd);
                    fd = -1;
                }
            }
        }
    }

    /**
     * Closes the volume and deletes its files. An operation still holding the files finishes on
     * the unlinked files; the descriptors close after it.
     */
    void delete() {
        deleting = true; // nothing to force: the files go
        close();
        try {
            Files.deleteIfExists(data);
            Files.deleteIfExists(checksums);
            Files.deleteIfExists(syncStateFile());
            Files.deleteIfExists(DurableFiles.temporary(syncStateFile()));
            Files.deleteIfExists(tokenFile());
            Files.deleteIfExists(DurableFiles.temporary(tokenFile()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
