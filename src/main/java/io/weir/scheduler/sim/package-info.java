/**
 * A deterministic, virtual-time simulator for the scheduler, used by the tests and for
 * experiments. It lives in {@code src/main} so it can be run from {@code target/classes}, but no
 * production code depends on it.
 *
 * <h2>Model</h2>
 * A node with N identical CPUs. {@link io.weir.scheduler.sim.Workload}s issue requests: closed
 * loops (fixed outstanding depth, optional think time), open loops (even or Poisson arrivals),
 * on/off periods, size mixes ({@link io.weir.scheduler.sim.SizeMix}) and background load. Each
 * request occupies a CPU for {@code base + perByte × bytes} of simulated time; the
 * {@link io.weir.scheduler.sim.Policy} is asked for work whenever a CPU is free and told the CPU
 * time at completion, exactly as {@link io.weir.scheduler.QosExecutor} does. Events are ordered by
 * (time, sequence) and randomness comes from one seeded {@code SplittableRandom}: the same seed
 * gives the same run, bit for bit.
 *
 * <h2>Policies compared</h2>
 * <ul>
 *   <li>{@code weir}: the production {@link io.weir.scheduler.HierarchicalScheduler}.</li>
 *   <li>{@code fifo}: one global FIFO in arrival order, the "no QoS" baseline.</li>
 *   <li>{@code sfq}: textbook flat start-time fair queueing over every queue by CPU time, with no
 *       tenants, limits, reservations or separate currencies.</li>
 * </ul>
 * The report prints each volume's byte share and each task's CPU share beside the ideal. The
 * ideal is computed from weights and shares alone among the loaded flows: it ignores limits,
 * reservations and on/off periods, so for those scenarios read the IOPS columns instead.
 *
 * <h2>Running</h2>
 * <pre>
 * mvn -q compile exec:java -Dexec.mainClass=io.weir.scheduler.sim.Simulator -Dexec.args="all 10 42"
 * java -cp target/classes:$HOME/.m2/repository/org/hdrhistogram/HdrHistogram/2.2.2/HdrHistogram-2.2.2.jar \
 *     io.weir.scheduler.sim.Simulator weights 10 42
 * </pre>
 * Scenarios: {@code weights} (1:2:4:8, 512 B to 1 MiB), {@code tenants}, {@code tasks} (70:20:10
 * with different CPU costs), {@code cap}, {@code reservation}, {@code rejoin}, or {@code all}.
 */
package io.weir.scheduler.sim;
