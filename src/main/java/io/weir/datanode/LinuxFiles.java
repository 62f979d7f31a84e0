package io.weir.datanode;

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;

/**
 * The Linux calls that Java 17 lacks, bound with JNA's direct mapping: {@code fallocate} (punch
 * holes) and {@code lseek} with {@code SEEK_DATA}/{@code SEEK_HOLE} (find holes) for sparse
 * files, and {@code sync_file_range} (start write-back without waiting for it), on a descriptor
 * opened with {@code open}. Data itself is read and written through
 * {@link java.nio.channels.FileChannel}.
 */
final class LinuxFiles {

    static {
        Native.register(NativeLibrary.getInstance(Platform.C_LIBRARY_NAME));
    }

    /** {@code O_RDONLY}. */
    static final int O_RDONLY = 0;
    /** {@code O_RDWR}. */
    static final int O_RDWR = 2;
    /** {@code O_CLOEXEC} (x86-64 and aarch64). */
    static final int O_CLOEXEC = 0x80000;
    /** {@code FALLOC_FL_KEEP_SIZE}: never change the file's size. */
    static final int FALLOC_FL_KEEP_SIZE = 1;
    /** {@code FALLOC_FL_PUNCH_HOLE}: deallocate the range (must be combined with KEEP_SIZE). */
    static final int FALLOC_FL_PUNCH_HOLE = 2;
    /** {@code SEEK_DATA}: the next offset at or after the given one that holds data. */
    static final int SEEK_DATA = 3;
    /** {@code SEEK_HOLE}: the next offset at or after the given one that is in a hole (or EOF). */
    static final int SEEK_HOLE = 4;
    /** {@code ENXIO}: lseek(SEEK_DATA) found no data after the offset. */
    static final int ENXIO = 6;
    /** {@code SYNC_FILE_RANGE_WRITE}: start write-out of dirty pages not already under write-out; do not wait. */
    static final int SYNC_FILE_RANGE_WRITE = 2;

    private LinuxFiles() {
    }

    static native int open(String path, int flags) throws LastErrorException;

    static native int close(int fd) throws LastErrorException;

    static native int fallocate(int fd, int mode, long offset, long length) throws LastErrorException;

    static native long lseek(int fd, long offset, int whence) throws LastErrorException;

    static native int sync_file_range(int fd, long offset, long nbytes, int flags) throws LastErrorException;

    /**
     * Starts writing back the file's dirty pages and returns without waiting for the disk (it
     * may still wait for room in the device's request queue). Not a durability point: neither
     * the file's metadata nor the disk's cache is flushed.
     */
    static void startWriteback(int fd) {
        sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
    }

    /** Deallocates {@code [offset, offset + length)}; reads return zeroes afterwards. */
    static void punchHole(int fd, long offset, long length) {
        if (length > 0) {
            fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, offset, length);
        }
    }

    /**
     * The next offset at or after {@code offset} holding data, or {@code -1} if there is none
     * before {@code end}.
     */
    static long nextData(int fd, long offset) {
        try {
            return lseek(fd, offset, SEEK_DATA);
        } catch (LastErrorException e) {
            if (e.getErrorCode() == ENXIO) {
                return -1;
            }
            throw e;
        }
    }

    /** The next offset at or after {@code offset} in a hole; the file's end counts as one. */
    static long nextHole(int fd, long offset) {
        return lseek(fd, offset, SEEK_HOLE);
    }
}
