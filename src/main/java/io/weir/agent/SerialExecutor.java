package io.weir.agent;

import java.lang.System.Logger.Level;
import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.Executor;

/**
 * Runs tasks one at a time, in submission order, on a shared {@link Executor}: an agent's event
 * "thread" without a thread of its own, so that many agents in one JVM (the load benchmark) can
 * share a small pool. The same idea as Guava's {@code SequentialExecutor}.
 *
 * <p>Implementation notes: a task that throws is logged and does not stop the ones after it.
 * Every task's effects are visible to the next (they are handed over under this object's
 * monitor).
 */
final class SerialExecutor implements Executor {

    private static final System.Logger LOG = System.getLogger(SerialExecutor.class.getName());

    private final Executor pool;
    /** Guarded by {@code this}. */
    private final Queue<Runnable> tasks = new ArrayDeque<>();
    /** Guarded by {@code this}: a drain is scheduled or running. */
    private boolean running;
    /** The thread running this executor's tasks, or null between drains. */
    private volatile Thread drainer;

    SerialExecutor(Executor pool) {
        this.pool = pool;
    }

    @Override
    public void execute(Runnable task) {
        synchronized (this) {
            tasks.add(task);
            if (running) {
                return;
            }
            running = true;
        }
        try {
            pool.execute(this::drain);
        } catch (RuntimeException e) {
            synchronized (this) {
                running = false;
                tasks.clear();
            }
            throw e;
        }
    }

    /** Whether the caller is one of this executor's tasks (a task that queues a task and waits for it waits for itself). */
    boolean inTask() {
        return drainer == Thread.currentThread();
    }

    private void drain() {
        drainer = Thread.currentThread();
        while (true) {
            Runnable next;
            synchronized (this) {
                next = tasks.poll();
                if (next == null) {
                    drainer = null; // before running is cleared: the next drain may start on another thread at once
                    running = false;
                    return;
                }
            }
            try {
                next.run();
            } catch (RuntimeException | Error e) {
                LOG.log(Level.ERROR, "agent task failed", e);
            }
        }
    }
}
