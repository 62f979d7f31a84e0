package io.weir.datanode;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * The data node's small state files, replaced whole and durably: written to a temporary file
 * beside them ({@link #temporary}), forced, renamed over the old one, and the directory forced, so
 * a crash leaves the old content or the new, never a mix, and a rename that was answered for is
 * not lost in a power cut.
 */
final class DurableFiles {

    private DurableFiles() {
    }

    /** Replaces {@code file} with {@code text} (UTF-8), durably and atomically. */
    static void replace(Path file, String text) throws IOException {
        Path tmp = temporary(file);
        Files.writeString(tmp, text, StandardCharsets.UTF_8);
        try (FileChannel c = FileChannel.open(tmp, StandardOpenOption.WRITE)) {
            c.force(true);
        }
        Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        forceDirectory(file.getParent());
    }

    /** The temporary file {@link #replace} writes {@code file}'s next content to (left behind by a crash). */
    static Path temporary(Path file) {
        return file.resolveSibling(file.getFileName() + ".tmp");
    }

    /** Makes the entries of {@code dir} (files created, renamed or deleted in it) durable. */
    static void forceDirectory(Path dir) throws IOException {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        }
    }
}
