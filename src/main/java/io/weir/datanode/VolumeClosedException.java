package io.weir.datanode;

import java.io.IOException;

/**
 * An operation on a volume that was closed before it started (the volume was removed from the
 * configuration or the node is stopping). Nothing was read or written; a client request that
 * meets it is answered {@code ESHUTDOWN}.
 */
final class VolumeClosedException extends IOException {

    private static final long serialVersionUID = 1L;

    VolumeClosedException(String exportName) {
        super("volume " + exportName + " is closed");
    }
}
