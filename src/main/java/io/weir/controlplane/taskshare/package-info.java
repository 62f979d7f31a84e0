/**
 * Task CPU shares: how the root scheduler of each data node divides its workers' time (CPU time,
 * plus time blocked in the store) among its tasks
 * (foreground client IO, gc, flush, replication, scrub, ...).
 *
 * <p>One cluster default, seeded by the schema, and at most one override per node; a node
 * enforces its override if it has one, else the default (exposed to the desired config as
 * {@link io.weir.controlplane.config.EffectiveTaskShares}). A share is static, or dynamic: it then
 * follows a utilization signal between two thresholds, linearly or exponentially (US 9,600,337).
 * Each set also carries {@code usageReportIntervalSeconds} (1-3600, default 10): how often the
 * agents of the nodes that enforce it send usage reports; it reaches them in the desired config.
 * And {@code ioCost}: the fixed cost of a read and of a write, in bytes, that the scheduler of
 * those nodes adds to a request's size ({@link io.weir.protocol.IoCost}; the model is written once
 * in {@code io.weir.scheduler.CostModel}), so that weights share a saturated node in what requests
 * really cost it.
 * Every change bumps the config revision.
 */
package io.weir.controlplane.taskshare;
