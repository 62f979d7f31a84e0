package io.weir.datanode;

import java.lang.System.Logger.Level;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * Tells the two kinds of {@link OutOfMemoryError} the data node meets apart, and acts on the one
 * it cannot contain.
 *
 * <p>Out of direct memory (a buffer the JDK could not reserve within
 * {@code -XX:MaxDirectMemorySize}) is contained: it costs one request or one connection, and the
 * memory comes back as buffers are released. Any other, above all the heap's, is not: every thread
 * of the node shares the heap, and a node that goes on after it may keep its port open and serve
 * nobody. Where the node catches an {@code OutOfMemoryError} (the selector thread, the workers'
 * requests) it passes one that is not direct to {@link #heapExhausted}, which runs the handler:
 * {@code java -jar weir.jar datanode} installs one that prints why and halts the process for its
 * supervisor to restart (the launchers also pass {@code -XX:+ExitOnOutOfMemoryError}, which ends
 * the JVM on any heap exhaustion the node does not catch); embedded, the default only logs it.
 *
 * <h2>Thread safety</h2>
 * The handler is one volatile field; any thread may call {@link #heapExhausted}.
 */
final class OutOfMemory {

    private static final System.Logger LOG = System.getLogger(OutOfMemory.class.getName());

    /** The default: an embedded node cannot end its host's process, so it only says so. */
    static final Consumer<OutOfMemoryError> LOG_ONLY = e -> LOG.log(Level.ERROR,
            "out of heap memory: this data node may no longer serve its clients; restart it", e);

    private static volatile Consumer<OutOfMemoryError> handler = LOG_ONLY;

    private OutOfMemory() {
    }

    /** Whether {@code e} is the JDK's failure to reserve direct buffer memory. */
    static boolean isDirect(OutOfMemoryError e) {
        String m = e.getMessage();
        return m != null && m.toLowerCase(Locale.ROOT).contains("direct buffer memory");
    }

    /**
     * If {@code t} is an {@link OutOfMemoryError} other than direct memory's, runs the handler
     * (which may not return). Returns whether it was one.
     */
    static boolean checkFatal(Throwable t) {
        if (t instanceof OutOfMemoryError e && !isDirect(e)) {
            heapExhausted(e);
            return true;
        }
        return false;
    }

    /** Runs the handler for an {@code OutOfMemoryError} the node cannot contain. */
    static void heapExhausted(OutOfMemoryError e) {
        try {
            handler.accept(e);
        } catch (Throwable ignored) {
            // nothing more can be done here; the caller goes on containing what it can
        }
    }

    /** Sets the handler; returns the one it replaces. */
    static Consumer<OutOfMemoryError> onHeapExhausted(Consumer<OutOfMemoryError> h) {
        Consumer<OutOfMemoryError> previous = handler;
        handler = Objects.requireNonNull(h);
        return previous;
    }
}
