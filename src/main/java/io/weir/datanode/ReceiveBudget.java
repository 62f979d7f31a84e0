package io.weir.datanode;

import io.weir.scheduler.SchedulerConfig;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;

/**
 * What a copy holds of its primaries' requests, read from their connections and not yet answered,
 * kept within bounds: at most {@link #DEFAULT_REQUESTS} requests of each volume, and
 * {@link #DEFAULT_BYTES} of WRITE payloads over all of them (tests build nodes with other budgets
 * of bytes, {@link DataNode.Builder#replicationReceiveBudget}). A connection's reader
 * {@linkplain #take takes} a request, with its payload's bytes, before it reads the payload, and
 * waits while it does not fit: it then reads nothing, so its primary's writes wait on TCP's
 * window, and the primary's clients on its own budgets, rather than the copy's heap filling with
 * writes it cannot apply yet (a slow store, a few primaries of large writes), or the volume's
 * queue in the scheduler ({@link SchedulerConfig#DEFAULT_QUEUE_CAPACITY} requests) refusing small
 * ones, which would put the copy out of sync. A request is {@linkplain #give given} back once it is
 * applied or refused, before its reply is written, so that a primary that does not read its
 * replies cannot keep the budget.
 *
 * <p>The bound on requests is per volume: a volume slow to drain on this node (its own limits, a
 * store that lags) holds back the one connection that carries it, not the other primaries'. Readers
 * waiting for bytes are served in their order of arrival, so that a large payload is not passed
 * by a stream of small ones; one first in line whose volume fills meanwhile steps out until its
 * volume has room, and back in first; one payload always fits when no bytes are held, whatever its size
 * (up to {@link ReplicationWire#MAX_LENGTH}, 32 MiB, below the default).
 *
 * <p>This budget is the copy's own, apart from the {@link BufferPool}'s, on purpose: a node's
 * client writes hold pool buffers until its copies answer them, so two nodes holding copies of
 * each other's volumes, each with its pool full of such writes, would wait for each other for
 * ever if their readers waited on their pools.
 *
 * <p>Thread safety: safe for any number of threads (one monitor).
 */
final class ReceiveBudget {

    /** The default budget of bytes: 64 MiB, two full queues of a client of 1 MiB writes at queue depth 32. */
    static final long DEFAULT_BYTES = 64L << 20;
    /**
     * The default bound on a volume's requests: its queue's capacity, so that its primary's
     * requests alone never find its queue here full.
     */
    static final int DEFAULT_REQUESTS = SchedulerConfig.DEFAULT_QUEUE_CAPACITY;
    /** How often a waiting reader looks whether its connection ended meanwhile. */
    private static final long GONE_CHECK_MILLIS = 100;

    private final long budget;
    private final int maxRequests;
    private long held;
    /** Requests held, by volume; a volume with none is absent. */
    private final Map<UUID, Integer> requests = new HashMap<>();
    /** Readers waiting for bytes, in their order of arrival. */
    private final ArrayDeque<Thread> waiting = new ArrayDeque<>();
    /** Readers waiting for their volume's requests to drain. */
    private int waitingForVolume;

    ReceiveBudget(long budget, int maxRequests) {
        if (budget < 1 || maxRequests < 1) {
            throw new IllegalArgumentException("the receive budget must be positive: " + budget + " bytes, " + maxRequests + " requests");
        }
        this.budget = budget;
        this.maxRequests = maxRequests;
    }

    /**
     * Takes one request of {@code volume} with a payload of {@code bytes} (0 for a request without
     * one), waiting while the volume holds its bound of requests, or the bytes do not fit or
     * readers that came first wait for bytes; false, having taken nothing, if {@code gone} says the
     * caller's connection ended meanwhile (or the thread is interrupted).
     */
    synchronized boolean take(UUID volume, long bytes, BooleanSupplier gone) {
        Thread me = Thread.currentThread();
        boolean stepsBackIn = false; // it was first in line, and steps back in first
        try {
            while (true) {
                if (full(volume)) { // outside the line: readers of other volumes go on
                    waitingForVolume++;
                    try {
                        while (full(volume)) {
                            if (gone.getAsBoolean()) {
                                return false;
                            }
                            wait(GONE_CHECK_MILLIS);
                        }
                    } finally {
                        waitingForVolume--;
                    }
                }
                if (waiting.isEmpty() && fits(bytes)) {
                    hold(volume, bytes);
                    return true;
                }
                if (stepsBackIn) {
                    waiting.addFirst(me);
                } else {
                    waiting.add(me);
                }
                while (waiting.peek() != me || !fits(bytes)) {
                    if (gone.getAsBoolean()) {
                        return false;
                    }
                    wait(GONE_CHECK_MILLIS);
                }
                if (!full(volume)) {
                    hold(volume, bytes);
                    return true;
                }
                // Another connection of its primary filled the volume meanwhile: it steps out of the
                // line, which goes on without it, until the volume has room.
                waiting.remove(me);
                notifyAll();
                stepsBackIn = true;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        } finally {
            if (waiting.remove(me)) {
                notifyAll(); // the next in line may fit now
            }
        }
    }

    private boolean full(UUID volume) {
        return requests.getOrDefault(volume, 0) >= maxRequests;
    }

    private boolean fits(long bytes) {
        return held == 0 || held + bytes <= budget;
    }

    private void hold(UUID volume, long bytes) {
        held += bytes;
        requests.merge(volume, 1, Integer::sum);
    }

    /** Gives back a request of {@code volume} taken with a payload of {@code bytes}, once it is applied or refused. */
    synchronized void give(UUID volume, long bytes) {
        held -= bytes;
        requests.computeIfPresent(volume, (v, n) -> n == 1 ? null : n - 1);
        notifyAll();
    }

    /** Bytes taken and not given back. */
    synchronized long held() {
        return held;
    }

    /** Requests taken and not given back, of every volume. */
    synchronized int requests() {
        return requests.values().stream().mapToInt(Integer::intValue).sum();
    }

    /** Readers waiting for room, for bytes or in their volume. */
    synchronized int waiting() {
        return waiting.size() + waitingForVolume;
    }
}
