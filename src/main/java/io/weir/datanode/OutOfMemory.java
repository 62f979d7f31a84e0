package io.weir.datanode;

/**
 * Tells the two kinds of {@link OutOfMemoryError} the data node meets apart. Out of direct memory
 * (a buffer the JDK could not reserve within {@code -XX:MaxDirectMemorySize}) is contained: it
 * costs one request or one connection, and memory comes back as buffers are released. Any other,
 * above all the heap's, is not: every thread of the node shares the heap, so the process should
 * end for its supervisor to restart it, rather than stay up serving nobody.
 */
final class OutOfMemory {

    private OutOfMemory() {
    }

    /** Whether {@code e} is the JDK's failure to reserve direct buffer memory. */
    static boolean isDirect(OutOfMemoryError e) {
        String m = e.getMessage();
        return m != null && m.toLowerCase(java.util.Locale.ROOT).contains("direct buffer memory");
    }
}
