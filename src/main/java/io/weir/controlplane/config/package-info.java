/**
 * The global config revision ({@link io.weir.controlplane.config.ConfigRevisions}) and the
 * desired-config snapshot of a data node ({@link io.weir.controlplane.config.DesiredConfigService}).
 *
 * <p>The snapshot reads the features through ports this package owns
 * ({@link io.weir.controlplane.config.PlacedVolumes}, {@link io.weir.controlplane.config.TenantDirectory},
 * {@link io.weir.controlplane.config.EffectiveTaskShares}, {@link io.weir.controlplane.config.PlacementIndex},
 * {@link io.weir.controlplane.config.ClusterTrust} for the PKI's {@code tls} member),
 * so it depends on none of them.
 */
package io.weir.controlplane.config;
