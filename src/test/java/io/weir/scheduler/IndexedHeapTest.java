package io.weir.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import io.weir.scheduler.SchedulerConfig.VolumeSpec;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/**
 * {@link IndexedHeap}'s bottom-up sift must leave the heap exactly as the classic sift would,
 * including which of several tied nodes is on top: ties are common (equal weights and costs) and
 * tie-breaking decides the order of service.
 */
class IndexedHeapTest {

    /** The classic d-ary heap (of {@link IndexedHeap#ARITY}) with the same tie rules, as the reference. */
    private static final class Classic {
        final List<SchedNode> nodes = new ArrayList<>();
        final List<Long> keys = new ArrayList<>();
        final Map<SchedNode, Integer> pos = new HashMap<>();

        void set(int i, SchedNode n, long k) {
            if (i == nodes.size()) {
                nodes.add(n);
                keys.add(k);
            } else {
                nodes.set(i, n);
                keys.set(i, k);
            }
            pos.put(n, i);
        }

        void add(SchedNode n, long k) {
            siftUp(nodes.size(), n, k);
        }

        void update(SchedNode n, long k) {
            int i = pos.get(n);
            if (k - keys.get(i) < 0) {
                siftUp(i, n, k);
            } else {
                siftDown(i, n, k);
            }
        }

        void remove(SchedNode n) {
            Integer i = pos.remove(n);
            if (i == null) {
                return;
            }
            int last = nodes.size() - 1;
            SchedNode moved = nodes.remove(last);
            long k = keys.remove(last);
            if (i != last) {
                siftDown(i, moved, k);
                if (nodes.get(i) == moved) {
                    siftUp(i, moved, k);
                }
            }
        }

        void siftUp(int i, SchedNode n, long k) {
            while (i > 0) {
                int p = (i - 1) / IndexedHeap.ARITY;
                if (k - keys.get(p) >= 0) {
                    break;
                }
                set(i, nodes.get(p), keys.get(p));
                i = p;
            }
            set(i, n, k);
        }

        void siftDown(int i, SchedNode n, long k) {
            int sz = nodes.size();
            while (IndexedHeap.ARITY * i + 1 < sz) {
                int first = IndexedHeap.ARITY * i + 1;
                int c = first;
                for (int j = first + 1; j < Math.min(first + IndexedHeap.ARITY, sz); j++) {
                    if (keys.get(j) - keys.get(c) < 0) {
                        c = j; // the leftmost of the smallest children
                    }
                }
                if (k - keys.get(c) <= 0) {
                    break;
                }
                set(i, nodes.get(c), keys.get(c));
                i = c;
            }
            set(i, n, k);
        }
    }

    @Test
    void bottomUpSiftMatchesTheClassicSiftExactly() {
        for (long seed = 0; seed < 50; seed++) {
            SplittableRandom r = new SplittableRandom(seed);
            IndexedHeap.Positions positions = new IndexedHeap.Positions();
            IndexedHeap<SchedNode> heap = new IndexedHeap<>(positions);
            Classic ref = new Classic();
            int n = 1 + r.nextInt(300);
            FlowNode[] all = new FlowNode[n];
            for (int i = 0; i < n; i++) {
                all[i] = new FlowNode(VolumeSpec.of("v" + i, "t"), i, this, 0);
                positions.ensure(i);
            }
            int keyRange = 1 + r.nextInt(20); // small ranges: many ties
            for (int op = 0; op < 5000; op++) {
                FlowNode f = all[r.nextInt(n)];
                long k = r.nextInt(keyRange) + (op / 100);
                boolean in = heap.contains(f);
                int what = r.nextInt(10);
                if (!in) {
                    heap.add(f, k);
                    ref.add(f, k);
                } else if (what < 6) {
                    heap.update(f, k);
                    ref.update(f, k);
                } else if (what < 8) {
                    heap.remove(f);
                    ref.remove(f);
                } else {
                    SchedNode top = heap.poll();
                    assertThat(top).isSameAs(ref.nodes.get(0));
                    ref.remove(top);
                }
                assertThat(heap.size()).isEqualTo(ref.nodes.size());
                if (!heap.isEmpty()) {
                    assertThat(heap.peek()).isSameAs(ref.nodes.get(0));
                    assertThat(heap.peekKey()).isEqualTo(ref.keys.get(0));
                }
            }
            // drain: the whole order, ties included, must match
            while (!heap.isEmpty()) {
                SchedNode top = heap.poll();
                assertThat(top).isSameAs(ref.nodes.get(0));
                ref.remove(top);
            }
        }
    }
}
