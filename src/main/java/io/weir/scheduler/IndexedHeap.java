package io.weir.scheduler;

import java.util.Arrays;

/**
 * A binary min-heap of scheduler nodes keyed by a {@code long}, with each node's position stored
 * in the node itself so that {@link #update} and {@link #remove} are {@code O(log n)} without a
 * search. One node can sit in several heaps at once, one per {@link #role}.
 *
 * <h2>Implementation notes</h2>
 * Keys are counters or {@code nanoTime} values, both of which may wrap, so keys compare by
 * subtraction: {@code a} precedes {@code b} when {@code a - b < 0}. This is a total order as long
 * as all live keys of one heap lie within {@code 2^62} of each other, which the rejoin rule
 * guarantees for counters and which holds for times. Keys are kept in a parallel {@code long[]}
 * so sifting touches one array of primitives, not the nodes.
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
final class IndexedHeap<N extends SchedNode> {

    /** The ready heap of a container, keyed by counter. */
    static final int READY = 0;
    /** The timer heap of throttled nodes, keyed by eligible time. */
    static final int TIMER = 1;
    /** The reservation heap, keyed by reservation tag. */
    static final int RESERVATION = 2;

    private static final int INITIAL_CAPACITY = 8;

    private final int role;
    private SchedNode[] nodes = new SchedNode[INITIAL_CAPACITY];
    private long[] keys = new long[INITIAL_CAPACITY];
    private int size;

    IndexedHeap(int role) {
        this.role = role;
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    @SuppressWarnings("unchecked")
    N peek() {
        return size == 0 ? null : (N) nodes[0];
    }

    /** Key of the top node; only valid when not empty. */
    long peekKey() {
        return keys[0];
    }

    boolean contains(SchedNode n) {
        return index(n) >= 0;
    }

    void add(N n, long key) {
        if (index(n) >= 0) {
            throw new IllegalStateException("already in heap: " + n);
        }
        if (size == nodes.length) {
            nodes = Arrays.copyOf(nodes, size * 2);
            keys = Arrays.copyOf(keys, size * 2);
        }
        siftUp(size++, n, key);
    }

    /** Changes the key of a node that is in the heap. */
    void update(N n, long key) {
        int i = index(n);
        long old = keys[i];
        if (key - old < 0) {
            siftUp(i, n, key);
        } else {
            siftDown(i, n, key);
        }
    }

    void remove(SchedNode n) {
        int i = index(n);
        if (i < 0) {
            return;
        }
        setIndex(n, -1);
        int last = --size;
        if (i != last) {
            SchedNode moved = nodes[last];
            long k = keys[last];
            nodes[last] = null;
            siftDown(i, moved, k);
            if (nodes[i] == moved) {
                siftUp(i, moved, k);
            }
        } else {
            nodes[last] = null;
        }
    }

    @SuppressWarnings("unchecked")
    N poll() {
        if (size == 0) {
            return null;
        }
        N top = (N) nodes[0];
        remove(top);
        return top;
    }

    /** Removes every node, resetting their positions. */
    void clear() {
        for (int i = 0; i < size; i++) {
            setIndex(nodes[i], -1);
            nodes[i] = null;
        }
        size = 0;
    }

    private void siftUp(int i, SchedNode n, long key) {
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            long pk = keys[parent];
            if (key - pk >= 0) {
                break;
            }
            SchedNode p = nodes[parent];
            nodes[i] = p;
            keys[i] = pk;
            setIndex(p, i);
            i = parent;
        }
        nodes[i] = n;
        keys[i] = key;
        setIndex(n, i);
    }

    private void siftDown(int i, SchedNode n, long key) {
        int half = size >>> 1;
        while (i < half) {
            int child = 2 * i + 1;
            long ck = keys[child];
            int right = child + 1;
            if (right < size && keys[right] - ck < 0) {
                child = right;
                ck = keys[right];
            }
            if (key - ck <= 0) {
                break;
            }
            SchedNode c = nodes[child];
            nodes[i] = c;
            keys[i] = ck;
            setIndex(c, i);
            i = child;
        }
        nodes[i] = n;
        keys[i] = key;
        setIndex(n, i);
    }

    private int index(SchedNode n) {
        switch (role) {
            case READY: return n.readyIndex;
            case TIMER: return n.timerIndex;
            default: return n.reservationIndex;
        }
    }

    private void setIndex(SchedNode n, int i) {
        switch (role) {
            case READY: n.readyIndex = i; break;
            case TIMER: n.timerIndex = i; break;
            default: n.reservationIndex = i; break;
        }
    }
}
