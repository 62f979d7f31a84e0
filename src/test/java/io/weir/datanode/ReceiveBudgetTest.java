package io.weir.datanode;

import static io.weir.support.Patience.PATIENCE;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** The copy's budget for its primaries' write payloads ({@link ReceiveBudget}), alone: real threads, no sockets. */
class ReceiveBudgetTest {

    private static final UUID V = UUID.fromString("00000000-0000-0000-0000-000000000001");
    private static final UUID W = UUID.fromString("00000000-0000-0000-0000-000000000002");

    @Test
    void takesWhatFitsAndAPayloadLargerThanTheWholeBudgetWhenNothingIsHeld() {
        ReceiveBudget b = new ReceiveBudget(100, 10);
        assertThat(b.take(V, 60, () -> false)).isTrue();
        assertThat(b.take(V, 40, () -> false)).isTrue();
        assertThat(b.held()).isEqualTo(100);
        b.give(V, 100);
        assertThat(b.take(V, 250, () -> false)).as("one payload always goes through when none is held").isTrue();
        assertThat(b.held()).isEqualTo(250);
        b.give(V, 250);
        assertThat(b.held()).isZero();
    }

    /**
     * Readers that wait go in their order of arrival: a large payload first in line is not passed
     * by a small one that would fit before it.
     */
    @Test
    void readersThatWaitGoInTheirOrderOfArrival() throws Exception {
        ReceiveBudget b = new ReceiveBudget(100, 10);
        assertThat(b.take(V, 90, () -> false)).isTrue();
        List<String> order = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> large = taking(b, 80, "large", order);
        await().atMost(PATIENCE).until(() -> b.waiting() == 1);
        CompletableFuture<Void> small = taking(b, 5, "small", order);
        // 5 bytes would fit beside the 90, but the 80 came first: both wait
        await().atMost(PATIENCE).until(() -> b.waiting() == 2);
        assertThat(order).isEmpty();
        b.give(V, 90);
        large.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
        small.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(order).containsExactlyInAnyOrder("large", "small");
        assertThat(b.held()).isEqualTo(85);
    }

    @Test
    void aReaderWhoseConnectionEndsWhileItWaitsTakesNothingAndLetsTheNextOneIn() throws Exception {
        ReceiveBudget b = new ReceiveBudget(100, 10);
        assertThat(b.take(V, 100, () -> false)).isTrue();
        AtomicBoolean gone = new AtomicBoolean();
        CompletableFuture<Boolean> first = CompletableFuture.supplyAsync(() -> b.take(V, 50, gone::get));
        await().atMost(PATIENCE).until(() -> b.waiting() == 1);
        List<String> order = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> second = taking(b, 50, "second", order);
        await().atMost(PATIENCE).until(() -> b.waiting() == 2);
        gone.set(true);
        assertThat(first.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS)).isFalse();
        assertThat(b.held()).isEqualTo(100);
        b.give(V, 100);
        second.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(order).containsExactly("second");
        assertThat(b.held()).isEqualTo(50);
        assertThat(b.waiting()).isZero();
    }

    /**
     * Requests without a payload count too, per volume: a volume's queue on the copy holds only so
     * many, and a volume at its bound does not hold back a reader of another volume.
     */
    @Test
    void noMoreRequestsOfAVolumeThanItsBoundAreTakenWhileOtherVolumesGoOn() throws Exception {
        ReceiveBudget b = new ReceiveBudget(100, 2);
        assertThat(b.take(V, 0, () -> false)).isTrue();
        assertThat(b.take(V, 10, () -> false)).isTrue();
        List<String> order = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> third = taking(b, V, 0, "third of V", order);
        await().atMost(PATIENCE).until(() -> b.waiting() == 1);
        assertThat(b.take(W, 10, () -> false)).as("another volume's request is taken beside it").isTrue();
        assertThat(order).isEmpty();
        b.give(V, 0);
        third.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(order).containsExactly("third of V");
        assertThat(b.requests()).isEqualTo(3);
        assertThat(b.held()).isEqualTo(20);
    }

    /**
     * A reader first in line for bytes whose volume fills meanwhile (another connection of its
     * primary took the volume's last request first) steps out of the line: a reader of another
     * volume behind it, whose bytes fit, goes on rather than wait for the first one's volume.
     */
    @Test
    void aReaderAtTheHeadOfTheLineWhoseVolumeFilledDoesNotHoldBackAnotherVolume() throws Exception {
        ReceiveBudget b = new ReceiveBudget(100, 1);
        assertThat(b.take(W, 100, () -> false)).isTrue(); // every byte held: the readers below line up
        List<String> order = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> firstOfV = taking(b, V, 10, "first of V", order);
        await().atMost(PATIENCE).until(() -> b.waiting() == 1);
        CompletableFuture<Void> secondOfV = taking(b, V, 10, "second of V", order);
        await().atMost(PATIENCE).until(() -> b.waiting() == 2);
        UUID other = UUID.randomUUID();
        CompletableFuture<Void> otherVolume = taking(b, other, 10, "other volume", order);
        await().atMost(PATIENCE).until(() -> b.waiting() == 3);

        b.give(W, 100); // the first of V takes V's one request; the second of V is first in line, V full

        firstOfV.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
        otherVolume.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(order).containsExactlyInAnyOrder("first of V", "other volume"); // each notes itself after its take
        assertThat(secondOfV).isNotDone();
        b.give(V, 10);
        secondOfV.get(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(order).hasSize(3).endsWith("second of V");
        assertThat(b.held()).isEqualTo(20);
    }

    @Test
    void aBudgetMustBePositive() {
        assertThatThrownBy(() -> new ReceiveBudget(0, 10)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be positive");
        assertThatThrownBy(() -> new ReceiveBudget(100, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("must be positive");
    }

    private static CompletableFuture<Void> taking(ReceiveBudget b, long bytes, String name, List<String> order) {
        return taking(b, V, bytes, name, order);
    }

    private static CompletableFuture<Void> taking(ReceiveBudget b, UUID volume, long bytes, String name, List<String> order) {
        return CompletableFuture.runAsync(() -> {
            assertThat(b.take(volume, bytes, () -> false)).isTrue();
            order.add(name);
        }, runnable -> new Thread(runnable, "taking-" + name).start());
    }
}
