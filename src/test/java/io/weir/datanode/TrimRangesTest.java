package io.weir.datanode;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import org.junit.jupiter.api.Test;

/** {@link TrimRanges}: merge, cancel and take, against a model of one flag per byte. */
class TrimRangesTest {

    @Test
    void addingMergesRangesThatOverlapOrTouch() {
        TrimRanges t = new TrimRanges();
        t.add(0, 10);
        t.add(20, 30);
        t.add(10, 20); // touches both
        t.add(40, 50);
        t.add(45, 60); // overlaps
        assertThat(t.ranges()).containsExactly(new TrimRanges.Range(0, 30), new TrimRanges.Range(40, 60));
        assertThat(t.pendingBytes()).isEqualTo(50);
    }

    @Test
    void cancellingSplitsARangeAroundTheCancelledPart() {
        TrimRanges t = new TrimRanges();
        t.add(0, 100);
        t.cancel(40, 60);
        assertThat(t.ranges()).containsExactly(new TrimRanges.Range(0, 40), new TrimRanges.Range(60, 100));
        t.cancel(30, 70); // across the gap
        assertThat(t.ranges()).containsExactly(new TrimRanges.Range(0, 30), new TrimRanges.Range(70, 100));
        assertThat(t.pendingBytes()).isEqualTo(60);
    }

    @Test
    void takingRemovesAtMostTheGivenBytesOfTheLowestRange() {
        TrimRanges t = new TrimRanges();
        t.add(100, 300);
        t.add(500, 600);
        assertThat(t.takeFirst(150)).isEqualTo(new TrimRanges.Range(100, 250));
        assertThat(t.takeFirst(150)).isEqualTo(new TrimRanges.Range(250, 300));
        assertThat(t.takeFirst(150)).isEqualTo(new TrimRanges.Range(500, 600));
        assertThat(t.takeFirst(150)).isNull();
        assertThat(t.pendingBytes()).isZero();
    }

    record Op(int kind, int from, int to) {
    }

    @Provide
    Arbitrary<List<Op>> ops() {
        Arbitrary<Op> op = Combinators.combine(Arbitraries.integers().between(0, 2), Arbitraries.integers().between(0, 200),
                Arbitraries.integers().between(0, 60)).as((k, from, len) -> new Op(k, from, from + len));
        return op.list().ofMaxSize(40);
    }

    /** Whatever the order of adds, cancels and takes, the ranges are the bytes a flag per byte says. */
    @Property(tries = 300)
    void theRangesAreAlwaysExactlyTheTrimmedBytesDisjointAndCoalesced(@ForAll("ops") List<Op> ops) {
        TrimRanges t = new TrimRanges();
        boolean[] model = new boolean[300];
        for (Op o : ops) {
            switch (o.kind()) {
                case 0 -> {
                    t.add(o.from(), o.to());
                    for (int i = o.from(); i < o.to(); i++) {
                        model[i] = true;
                    }
                }
                case 1 -> {
                    t.cancel(o.from(), o.to());
                    for (int i = o.from(); i < o.to(); i++) {
                        model[i] = false;
                    }
                }
                default -> {
                    TrimRanges.Range r = t.takeFirst(o.to() - o.from() + 1);
                    int first = firstSet(model);
                    if (first < 0) {
                        assertThat(r).isNull();
                    } else {
                        assertThat(r.start()).isEqualTo(first);
                        for (long i = r.start(); i < r.end(); i++) {
                            assertThat(model[(int) i]).isTrue();
                            model[(int) i] = false;
                        }
                    }
                }
            }
            List<TrimRanges.Range> expected = ranges(model);
            assertThat(t.ranges()).isEqualTo(expected);
            assertThat(t.pendingBytes()).isEqualTo(expected.stream().mapToLong(TrimRanges.Range::length).sum());
        }
    }

    private static int firstSet(boolean[] model) {
        for (int i = 0; i < model.length; i++) {
            if (model[i]) {
                return i;
            }
        }
        return -1;
    }

    /** The maximal runs of set flags: disjoint and coalesced by construction. */
    private static List<TrimRanges.Range> ranges(boolean[] model) {
        List<TrimRanges.Range> out = new ArrayList<>();
        int i = 0;
        while (i < model.length) {
            if (!model[i]) {
                i++;
                continue;
            }
            int start = i;
            while (i < model.length && model[i]) {
                i++;
            }
            out.add(new TrimRanges.Range(start, i));
        }
        return out;
    }
}
