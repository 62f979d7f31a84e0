package io.weir.datanode;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A test-only service time ({@link DataNode.Builder#serviceTime}) that holds the first transfer
 * after {@link #arm} in the store until {@link #release}: with one worker, the requests behind it
 * queue, and the worker then runs them as one batch.
 */
final class StoreGate implements VolumeStore.ServiceTime {

    private final CountDownLatch entered = new CountDownLatch(1);
    private final CountDownLatch released = new CountDownLatch(1);
    private final AtomicBoolean armed = new AtomicBoolean();

    /** The next transfer is held. */
    void arm() {
        armed.set(true);
    }

    /** Whether the held transfer reached the store within {@code seconds}. */
    boolean entered(long seconds) throws InterruptedException {
        return entered.await(seconds, TimeUnit.SECONDS);
    }

    /** Lets the held transfer go on. */
    void release() {
        released.countDown();
    }

    @Override
    public void serve(long bytes) {
        if (armed.compareAndSet(true, false)) {
            entered.countDown();
            try {
                released.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
