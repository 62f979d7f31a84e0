package io.weir.scheduler;

import java.util.Arrays;

/**
 * A 4-ary min-heap of scheduler nodes keyed by a {@code long}, whose positions are tracked in a
 * shared {@link Positions} table so that {@link #update} and {@link #remove} are {@code O(log n)}
 * without a search. A node can be in one heap per table at a time.
 *
 * <h2>Implementation notes</h2>
 *
 * <h3>Memory layout</h3>
 * Sifting is the hot loop of every decision. An entry is a key and a node slot in two parallel
 * primitive arrays; positions live in an {@code int[]} indexed by slot, and so do the nodes
 * themselves ({@link Positions#nodes}, written when a node is added, read by {@link #peek}). A
 * sift reads and writes only primitive arrays: it never dereferences the nodes it moves, and it
 * stores no references, so it pays no GC write barrier (G1's costs a fence for a reference stored
 * into an old object). With 10,000 flows this keeps a decision within a handful of cache lines
 * instead of one miss per level.
 *
 * <h3>Arity</h3>
 * The heap is 4-ary: the children of entry {@code i} are {@code 4i+1 .. 4i+4}, so their keys
 * are 32 contiguous bytes (one or two cache lines, which the adjacent-line prefetcher fetches
 * together). A sift visits half as many levels as in a binary heap for the same number of
 * loads per level, and moves half as many entries (each with a random write to the position
 * table). With 100,000 flows the lower levels of the heaps no longer fit in the L2 cache, and
 * each level of descent is a dependent miss, so the depth is what counts.
 *
 * <h3>Ordering</h3>
 * Keys are counters or {@code nanoTime} values, both of which may wrap, so keys compare by
 * subtraction: {@code a} precedes {@code b} when {@code a - b < 0}. This is a total order as long
 * as all live keys of one heap lie within {@code 2^63} of each other, which the rejoin rule, the
 * bounded lead and the rebasing of each level guarantee for counters ({@link HierarchicalScheduler})
 * and which holds for times.
 *
 * <p>Not thread-safe; guarded by the scheduler lock.
 */
final class IndexedHeap<N extends SchedNode> {

    private static final int INITIAL_CAPACITY = 4;

    /** log2 of the number of children per entry: a 4-ary heap (see the class notes). */
    static final int ARITY_BITS = 2;

    /** Children per entry. */
    static final int ARITY = 1 << ARITY_BITS;

    /**
     * Slot-indexed positions of nodes within the heaps that share this table; {@code -1} when a
     * node is in none of them.
     */
    static final class Positions {
        int[] pos = new int[64];
        /**
         * The node of each slot, set whenever it is added to one of the heaps. An entry may
         * outlive its node's retirement until the slot is reused; it is only read for slots that
         * are in a heap.
         */
        SchedNode[] nodes = new SchedNode[64];

        Positions() {
            Arrays.fill(pos, -1);
        }

        void ensure(int slot) {
            if (slot >= pos.length) {
                int old = pos.length;
                pos = Arrays.copyOf(pos, Math.max(slot + 1, old * 2));
                Arrays.fill(pos, old, pos.length, -1);
                nodes = Arrays.copyOf(nodes, pos.length);
            }
        }

        int get(int slot) {
            return pos[slot];
        }
    }

    private final Positions positions;
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
        return size == 0 ? null : (N) positions.nodes[slots[0]];
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
        if (size == keys.length) {
            int cap = size * 2;
            keys = Arrays.copyOf(keys, cap);
            slots = Arrays.copyOf(slots, cap);
        }
        positions.nodes[n.slot] = n;
        siftUp(size++, n.slot, key);
    }

    /** Changes the key of a node that is in this heap. */
    void update(N n, long key) {
        int slot = n.slot;
        int i = positions.pos[slot];
        if (key - keys[i] < 0) {
            siftUp(i, slot, key);
        } else {
            siftDown(i, slot, key);
        }
    }

    /** Removes {@code n} if it is in this heap. */
    void remove(SchedNode n) {
        int i = positions.pos[n.slot];
        if (i < 0 || i >= size || slots[i] != n.slot) {
            return;
        }
        positions.pos[n.slot] = -1;
        int last = --size;
        if (i != last) {
            long k = keys[last];
            int s = slots[last];
            siftDown(i, s, k);
            if (slots[i] == s) {
                siftUp(i, s, k);
            }
        }
    }

    @SuppressWarnings("unchecked")
    N poll() {
        if (size == 0) {
            return null;
        }
        N top = (N) positions.nodes[slots[0]];
        remove(top);
        return top;
    }

    /**
     * Subtracts {@code delta} from every key: the order is unchanged, so no entry moves. Used when
     * a level rebases its counters; {@code O(n)}.
     */
    void shiftKeys(long delta) {
        long[] ks = keys;
        for (int i = 0; i < size; i++) {
            ks[i] -= delta;
        }
    }

    /** Removes every node. */
    void clear() {
        int[] pos = positions.pos;
        for (int i = 0; i < size; i++) {
            pos[slots[i]] = -1;
        }
        size = 0;
    }

    private void siftUp(int i, int slot, long key) {
        long[] ks = keys;
        int[] ss = slots;
        int[] pos = positions.pos;
        while (i > 0) {
            int parent = (i - 1) >>> ARITY_BITS;
            long pk = ks[parent];
            if (key - pk >= 0) {
                break;
            }
            int ps = ss[parent];
            ks[i] = pk;
            ss[i] = ps;
            pos[ps] = i;
            i = parent;
        }
        ks[i] = key;
        ss[i] = slot;
        pos[slot] = i;
    }

    /**
     * Moves {@code n} (with {@code key}) from position {@code i} down to where it belongs.
     * Bottom-up (Wegener): first walk the path of smallest children to a leaf comparing children
     * only, then climb back to the deepest path entry smaller than {@code key}, then shift the
     * path above it up one level. The result is exactly the classic sift's (same path, key placed
     * above the entries it ties with), but the descent makes no comparisons with {@code key}, and
     * the choice among the children compiles to conditional moves rather than branches that
     * mispredict. It pays off because a dispatched flow's counter usually jumps behind most of
     * its siblings, so the sift goes nearly all the way down.
     */
    private void siftDown(int i, int slot, long key) {
        long[] ks = keys;
        int[] ss = slots;
        int[] pos = positions.pos;
        int sz = size;
        // 1. descend along the smallest child (the leftmost of tied ones) to a leaf
        int m = i;
        for (int c = (m << ARITY_BITS) + 1; c < sz; c = (m << ARITY_BITS) + 1) {
            if (c + 3 < sz) {
                // all four children: a tournament of two pairs, left winning ties
                long k0 = ks[c];
                long k1 = ks[c + 1];
                long k2 = ks[c + 2];
                long k3 = ks[c + 3];
                int a = k1 - k0 < 0 ? c + 1 : c;
                long ak = k1 - k0 < 0 ? k1 : k0;
                int b = k3 - k2 < 0 ? c + 3 : c + 2;
                long bk = k3 - k2 < 0 ? k3 : k2;
                m = bk - ak < 0 ? b : a;
            } else {
                int best = c;
                long bestKey = ks[c];
                for (int j = c + 1; j < sz; j++) {
                    if (ks[j] - bestKey < 0) {
                        best = j;
                        bestKey = ks[j];
                    }
                }
                m = best;
            }
        }
        // 2. climb to the deepest entry on the path that precedes key (ties stay below key)
        while (m != i && ks[m] - key >= 0) {
            m = (m - 1) >>> ARITY_BITS;
        }
        // 3. put key at m and shift the path entries between i and m up one level
        long ck = key;
        int cs = slot;
        while (m != i) {
            long tk = ks[m];
            int ts = ss[m];
            ks[m] = ck;
            ss[m] = cs;
            pos[cs] = m;
            ck = tk;
            cs = ts;
            m = (m - 1) >>> ARITY_BITS;
        }
        ks[i] = ck;
        ss[i] = cs;
        pos[cs] = i;
    }
}
