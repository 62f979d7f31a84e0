package io.weir.datanode;

import io.weir.scheduler.SchedulerConfig;
import java.util.ArrayDeque;
import java.util.function.BooleanSupplier;

/**
 * What a copy holds of its primaries' requests, read from their connections and not yet answered,
 * kept within a node-wide budget: at most {@link #DEFAULT_REQUESTS} requests and
 * {@link #DEFAULT_BYTES} of WRITE payloads (tests build nodes with other budgets of bytes,
 * {@link DataNode.Builder#replicationReceiveBudget}). A connection's reader {@linkplain #take
 * takes} a request, with its payload's bytes, before it reads the payload, and waits while it does
 * not fit: it then reads nothing, so its primary's writes wait on TCP's window, and the primary's
 * clients on its own budgets, rather than the copy's heap filling with writes it cannot apply yet
 * (a slow store, a few primaries of large writes), or its volume's queue refusing small ones (the
 * scheduler's queue of a volume holds {@link SchedulerConfig#DEFAULT_QUEUE_CAPACITY} requests; a
 * refused one would put the copy out of sync). A request is {@linkplain #give given} back once it
 * is applied (or refused), before its reply is written, so that a primary that does not read its
 * replies cannot keep the budget.
 *
 * <p>Readers that wait are served in their order of arrival, so that a large payload is not passed
 * by a stream of small ones; one payload always fits when nothing is held, whatever its size (up
 * to {@link ReplicationWire#MAX_LENGTH}, 32 MiB, below the default).
 *
 * <p>This budget is the copy's own, apart from the {@link BufferPool}'s, on purpose: a node's
 * client writes hold pool buffers until its copies answer them, so two nodes holding copies of
 * each other's volumes, each with its pool full of such writes, would wait for each other for
 * ever if their readers waited on their pools.
 *
 * <p>Thread safety: safe for any number of threads (one monitor).
 */
final class ReceiveBudget {

    /** The default budget: 64 MiB, two full queues of a client of 1 MiB writes at queue depth 32. */
    static final long DEFAULT_BYTES = 64L << 20;
    /**
     * The default bound on requests: a volume's queue, so that no volume's queue on the copy is
     * ever full of forwarded requests (the copy serves no client of its copies' volumes).
     */
    static final int DEFAULT_REQUESTS = SchedulerConfig.DEFAULT_QUEUE_CAPACITY;
    /** How often a waiting reader looks whether its connection ended meanwhile. */
    private static final long GONE_CHECK_MILLIS = 100;

    private final long budget;
    private final int maxRequests;
    private long held;
    private int requests;
    private final ArrayDeque<Thread> waiting = new ArrayDeque<>();

    ReceiveBudget(long budget, int maxRequests) {
        if (budget < 1 || maxRequests < 1) {
            throw new IllegalArgumentException("the receive budget must be positive: " + budget + " bytes, " + maxRequests + " requests");
        }
        this.budget = budget;
        this.maxRequests = maxRequests;
    }

    /**
     * Takes one request with a payload of {@code bytes} (0 for a request without one), waiting
     * while it does not fit or readers that came first wait; false, having taken nothing, if
     * {@code gone} says the caller's connection ended meanwhile (or the thread is interrupted).
     */
    synchronized boolean take(long bytes, BooleanSupplier gone) {
        if (waiting.isEmpty() && fits(bytes)) {
            held += bytes;
            requests++;
            return true;
        }
        Thread me = Thread.currentThread();
        waiting.add(me);
        try {
            while (waiting.peek() != me || !fits(bytes)) {
                if (gone.getAsBoolean()) {
                    return false;
                }
                wait(GONE_CHECK_MILLIS);
            }
            held += bytes;
            requests++;
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            waiting.remove(me);
            notifyAll(); // the next in line may fit now
        }
    }

    private boolean fits(long bytes) {
        return requests < maxRequests && (held == 0 || held + bytes <= budget);
    }

    /** Gives back a request taken with a payload of {@code bytes}, once it is applied or refused. */
    synchronized void give(long bytes) {
        held -= bytes;
        requests--;
        notifyAll();
    }

    /** Requests taken and not given back. */
    synchronized int requests() {
        return requests;
    }

    /** Bytes taken and not given back. */
    synchronized long held() {
        return held;
    }

    /** Readers waiting for room. */
    synchronized int waiting() {
        return waiting.size();
    }
}
