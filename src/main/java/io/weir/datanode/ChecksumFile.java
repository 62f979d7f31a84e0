package io.weir.datanode;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A volume's checksum file ({@code <id>.crc}), memory-mapped: one CRC32C per
 * {@value VolumeStore#BLOCK}-byte block of the data file, 0 meaning "not known" (never written,
 * trimmed or zeroed; also the 1 in 2^32 block whose CRC is 0). The mapping and the number of
 * blocks it covers are one object, read together: a writer that read a new count beside an old,
 * shorter mapping would write past that mapping's end, so a resize maps a new one
 * ({@link #map}). Callers hold the stripe of a block while they read or write its entry
 * ({@link VolumeStore}'s locking).
 */
final class ChecksumFile {

    private final MappedByteBuffer map;
    private final long blocks;

    private ChecksumFile(MappedByteBuffer map, long blocks) {
        this.map = map;
        this.blocks = blocks;
    }

    /**
     * Maps {@code file} (created if missing) for a data file of {@code sizeBytes}: as many entries
     * as it has blocks, at most {@code Integer.MAX_VALUE / 4} (blocks beyond have no checksum).
     */
    static ChecksumFile map(Path file, long sizeBytes) throws IOException {
        long blocks = Math.min((sizeBytes + VolumeStore.BLOCK - 1) / VolumeStore.BLOCK, Integer.MAX_VALUE / 4);
        try (FileChannel c = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE)) {
            return new ChecksumFile(c.map(FileChannel.MapMode.READ_WRITE, 0, blocks * 4), blocks);
        }
    }

    /** Blocks this mapping covers. */
    long blocks() {
        return blocks;
    }

    /** The checksum of {@code block}, 0 if not known; {@code block} below {@link #blocks}. */
    int get(long block) {
        return map.getInt((int) (block * 4));
    }

    /** Sets the checksum of {@code block}, below {@link #blocks}. */
    void put(long block, int crc) {
        map.putInt((int) (block * 4), crc);
    }

    /** Forgets the checksums of the blocks that start in {@code [fromByte, toByte)}. */
    void clear(long fromByte, long toByte) {
        for (long b = fromByte / VolumeStore.BLOCK; b * VolumeStore.BLOCK < toByte && b < blocks; b++) {
            put(b, 0);
        }
    }

    /** Writes the mapping's changes to the file. */
    void force() {
        map.force();
    }
}
