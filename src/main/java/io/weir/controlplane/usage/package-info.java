/**
 * Per-flow usage: what each volume, tenant and scheduler task actually got, from the agents'
 * reports to the query API and the dashboard.
 *
 * <ul>
 *   <li>{@link io.weir.controlplane.usage.UsageIngest} stores reports: the agent channel
 *       ({@code controlplane.push}) calls {@code ingestPlaced} with batches of what agents sent,
 *       which keeps of each report only the volumes placed on the reporting node; then
 *       deduplicated by (node, sequence), raw samples by {@code COPY}, 1-minute and 1-hour rollups
 *       kept in the same transaction, gaps recorded. The caller acknowledges each report once the
 *       call returns. Rollup sums are clamped at the largest bigint instead of overflowing, so
 *       no report can make a tenant's later reports fail. What the reports become (raw rows,
 *       rollup sums, gaps) is computed apart from the SQL, by {@code UsageBatch}.</li>
 *   <li>{@code UsagePartitions} keeps the time partitions: daily for raw samples and 1-minute
 *       rollups, monthly for 1-hour rollups, created ahead and dropped whole past each level's
 *       retention ({@code weir.usage.retention.*}).</li>
 *   <li>{@code UsageQueries} and {@code UsageController} serve {@code /api/v1/usage/...}: series
 *       per volume, tenant (summed over its volumes), the total of what the caller sees (every
 *       volume, or a bound caller's tenant: the dashboard's cluster figures) and node task, and a
 *       top-N; each series is
 *       read from the coarsest level whose bucket divides the step. A volume's point sums its
 *       nodes' rows: a replicated volume's primary reports its clients' reads and writes, and its
 *       copies report what they applied for it as {@code replicaOps} and {@code replicaBytes}, so
 *       each client request counts once. Aggregates never overflow
 *       (numeric sums clamped to a bigint, products in float8, float terms clamped), so a stored
 *       extreme never fails a query, nor serves "Infinity".</li>
 *   <li>{@link io.weir.controlplane.usage.UsedSpaceHistory}: the used bytes the data nodes report in
 *       their status ({@code usage_volume_used}, one row per change per node, kept as long as raw
 *       samples), served at {@code GET /api/v1/usage/volumes/{id}/used}; it tells the
 *       {@link io.weir.controlplane.usage.UsedSpaceListener} (the volume feature) in the same
 *       transaction.</li>
 *   <li>{@code UsageMetrics}: Prometheus metrics of bounded cardinality (never per volume).</li>
 * </ul>
 *
 * <p>It depends on no other feature package (the push feature depends on it, to store what agents
 * report): it reads volumes, tenants and nodes through the
 * ports it owns ({@link io.weir.controlplane.usage.UsageVolumes},
 * {@link io.weir.controlplane.usage.UsageTenants}, {@link io.weir.controlplane.usage.UsageNodes}),
 * which those features implement, and scoping through {@code security.AccessScope}.
 */
package io.weir.controlplane.usage;
