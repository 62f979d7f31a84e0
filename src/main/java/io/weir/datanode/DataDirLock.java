package io.weir.datanode;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A data dir's claim by one node: an exclusive lock on its {@value #FILE} file, held from the
 * node's start to its close (the operating system drops it when the process dies, so a crash
 * leaves nothing to clean up). A second node over the same directory, in this process or another,
 * is refused at start: it would set aside the first's volume files at its first config.
 */
final class DataDirLock implements AutoCloseable {

    /** The lock file, in the data dir; its content is not used. */
    static final String FILE = ".lock";

    private final FileChannel channel;
    private final FileLock lock;

    private DataDirLock(FileChannel channel, FileLock lock) {
        this.channel = channel;
        this.lock = lock;
    }

    /**
     * Creates {@code dataDir} if needed and locks it.
     *
     * @throws IOException if another node holds it, or the directory cannot be made or written
     */
    static DataDirLock acquire(Path dataDir) throws IOException {
        Files.createDirectories(dataDir);
        FileChannel channel = FileChannel.open(dataDir.resolve(FILE), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = channel.tryLock();
        } catch (OverlappingFileLockException e) { // a node of this process holds it
            lock = null;
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        if (lock == null) {
            channel.close();
            throw new IOException("data dir " + dataDir + " is in use by another data node (it holds "
                    + dataDir.resolve(FILE) + ")");
        }
        return new DataDirLock(channel, lock);
    }

    @Override
    public void close() {
        try {
            lock.release();
            channel.close();
        } catch (IOException e) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // the lock goes with the channel, or with the process
            }
        }
    }
}
