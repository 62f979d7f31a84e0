package io.weir.scheduler;

import java.util.Arrays;

/**
 * A binary min-heap of scheduler nodes keyed by a {@code long}, whose positions are tracked in a
 * shared {@link Positions} table so that {@link #update} and {@link #remove} are {@code O(log n)}
 * without a search. A node can be in one heap per table at a time.
 *
 * <h2>Implementation notes</h2>
 *
 * <h3>Memory layout</h3>
 * Sifting is the hot loop of every decision. Each entry is spread over three parallel arrays
 * (key, node slot, node reference), and positions live in an {@code int[]} indexed by slot, so a
 * sift reads and writes only contiguous primitive arrays and never dereferences the nodes it
 * moves. With 10,000 flows this keeps a decision within a handful of cache lines instead of one
 * miss per level.
 *
 * <h3>Ordering</h3>
 * Keys are counters or {@code nanoTime} values, both of which may wrap, so keys compare by
 * subtraction: {@code a} precedes {@code b} when {@code a - b < 0}. This is a total order as long
 * as all live keys of one heap lie within {@code 2^62} of each other, which the rejoin rule
 * guarantees for counters and which holds for times.
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
final class IndexedHeap<N extends SchedNode> {

    private static final int INITIAL_CAPACITY = 4;

    /**
     * Slot-indexed positions of nodes within the heaps that share this table; {@code -1} when a
     * node is in none of them.
     */
    static final class Positions {
        int[] pos = new int[64];

        Positions() {
            Arrays.fill(pos, -1);
        }

        void ensure(int slot) {
            if (slot >= pos.length) {
                int old = pos.length;
                pos = Arrays.copyOf(pos, Math.max(slot + 1, old * 2));
                Arrays.fill(pos, old, pos.length, -1);
            }
        }

        int get(int slot) {
            return pos[slot];
        }
    }

    private final Positions positions;
    private SchedNode[] nodes = new SchedNode[INITIAL_CAPACITY];
    private long[] keys = new long[INITIAL_CAPACITY];
    private int[] slots = new int[INITIAL_CAPACITY];
    private int size;

    IndexedHeap(Positions positions) {
        this.positions = positions;
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
        return positions.pos[n.slot] >= 0;
    }

    void add(N n, long key) {
        if (positions.pos[n.slot] >= 0) {
            throw new IllegalStateException("already in a heap: " + n);
        }
        if (size == nodes.length) {
            int cap = size * 2;
            nodes = Arrays.copyOf(nodes, cap);
            keys = Arrays.copyOf(keys, cap);
            slots = Arrays.copyOf(slots, cap);
        }
        siftUp(size++, n, n.slot, key);
    }

    /** Changes the key of a node that is in this heap. */
    void update(N n, long key) {
        int slot = n.slot;
        int i = positions.pos[slot];
        if (key - keys[i] < 0) {
            siftUp(i, n, slot, key);
        } else {
            siftDown(i, n, slot, key);
        }
    }

    /** Removes {@code n} if it is in this heap. */
    void remove(SchedNode n) {
        int i = positions.pos[n.slot];
        if (i < 0 || i >= size || nodes[i] != n) {
            return;
        }
        positions.pos[n.slot] = -1;
        int last = --size;
        if (i != last) {
            SchedNode moved = nodes[last];
            long k = keys[last];
            int s = slots[last];
            nodes[last] = null;
            siftDown(i, moved, s, k);
            if (nodes[i] == moved) {
                siftUp(i, moved, s, k);
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

    /** Removes every node. */
    void clear() {
        int[] pos = positions.pos;
        for (int i = 0; i < size; i++) {
            pos[slots[i]] = -1;
            nodes[i] = null;
        }
        size = 0;
    }

    private void siftUp(int i, SchedNode n, int slot, long key) {
        long[] ks = keys;
        int[] ss = slots;
        SchedNode[] ns = nodes;
        int[] pos = positions.pos;
        while (i > 0) {
            int parent = (i - 1) >>> 1;
            long pk = ks[parent];
            if (key - pk >= 0) {
                break;
            }
            int ps = ss[parent];
            ns[i] = ns[parent];
            ks[i] = pk;
            ss[i] = ps;
            pos[ps] = i;
            i = parent;
        }
        ns[i] = n;
        ks[i] = key;
        ss[i] = slot;
        pos[slot] = i;
    }

    /**
     * Moves {@code n} (with {@code key}) from position {@code i} down to where it belongs.
     * Bottom-up (Wegener): first walk the path of smaller children to a leaf comparing children
     * only, then climb back to the deepest path entry smaller than {@code key}, then shift the
     * path above it up one level. The result is exactly the classic sift's (same path, key placed
     * above the entries it ties with), but the descent has one comparison per level instead of
     * two, and the left/right choice compiles to a conditional move, not a branch that
     * mispredicts half the time. It pays off because a dispatched flow's counter usually jumps
     * behind most of its siblings, so the sift goes nearly all the way down.
     */
    private void siftDown(int i, SchedNode n, int slot, long key) {
        long[] ks = keys;
        int[] ss = slots;
        SchedNode[] ns = nodes;
        int[] pos = positions.pos;
        int sz = size;
        int half = sz >>> 1;
        // 1. descend along the smaller child to a leaf
        int m = i;
        while (m < half) {
            int child = 2 * m + 1;
            int right = child + 1;
            if (right < sz) {
                child += ks[right] - ks[child] < 0 ? 1 : 0;
            }
            m = child;
        }
        // 2. climb to the deepest entry on the path that precedes key (ties stay below key)
        while (m != i && ks[m] - key >= 0) {
            m = (m - 1) >>> 1;
        }
        // 3. put key at m and shift the path entries between i and m up one level
        SchedNode cn = n;
        long ck = key;
        int cs = slot;
        while (m != i) {
            SchedNode tn = ns[m];
            long tk = ks[m];
            int ts = ss[m];
            ns[m] = cn;
            ks[m] = ck;
            ss[m] = cs;
            pos[cs] = m;
            cn = tn;
            ck = tk;
            cs = ts;
            m = (m - 1) >>> 1;
        }
        ns[i] = cn;
        ks[i] = ck;
        ss[i] = cs;
        pos[cs] = i;
    }
}
