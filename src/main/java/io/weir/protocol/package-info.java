/**
 * Wire messages between the control plane and the data-node agents, and their JSON form.
 *
 * <p>Depends on the JDK, Jackson and JSpecify's nullness annotations only, so that a data node can
 * embed the agent without Spring.
 * Records map to JSON field for field (camelCase); enums are written in lower case as they are
 * named.
 *
 * <ul>
 *   <li>{@link io.weir.protocol.DesiredConfig} and its parts: the snapshot one node enforces.</li>
 *   <li>{@link io.weir.protocol.AgentMessage}, {@link io.weir.protocol.AgentMessages} and
 *       {@link io.weir.protocol.ProtocolException}: the agent channel's messages and their strict
 *       codec ({@code type}, {@code protocolVersion}, frame size), among them a data node's
 *       server-certificate request and its answer ({@code certificateRequest}, {@code certificate}).</li>
 *   <li>{@link io.weir.protocol.TlsConfig} and {@link io.weir.protocol.ClientCertificateEntry}: the
 *       cluster PKI in the desired config (CA, valid and revoked client certificates); its class
 *       comment is the contract a data node enforces on its NBD clients.</li>
 *   <li>{@link io.weir.protocol.UsageReport}: the {@code usage} message, what one node's scheduler
 *       did over one reporting interval, numbered per agent and answered by
 *       {@link io.weir.protocol.AgentMessage.UsageAck}; its figures are checked against bounds that
 *       storage and every query can hold (finite, not negative, bounded, {@code to} at most a
 *       small clock skew ahead of the receiver's clock), and a report that breaks them is
 *       refused alone, with a {@code usageAck} that says so. The interval itself travels in
 *       {@link io.weir.protocol.DesiredConfig#usageReportIntervalSeconds()}.</li>
 *   <li>{@link io.weir.protocol.WireText}: the rule for every string of the channel (bounded
 *       length, no NUL or other control character).</li>
 *   <li>{@link io.weir.protocol.AgentMessage.NodeStatus}: a data node's exports, each with the
 *       bytes allocated in its file ({@code usedBytes}), which the control plane keeps as history
 *       and scales capacity basis {@code used} with.</li>
 *   <li>{@link io.weir.protocol.ConfigDigest}: names a snapshot's content, for the agent's
 *       {@code hello} (a revision alone may name another node's snapshot, or one from before a
 *       database restore).</li>
 *   <li>{@link io.weir.protocol.QosSettings}: the six QoS fields and their rules, the one contract
 *       that the control plane's REST API and the data node's scheduler both check. It uses no
 *       Jackson (a rule {@code ArchitectureTest} enforces), so that {@code io.weir.scheduler} may
 *       depend on it, and on nothing else here.</li>
 *   <li>{@link io.weir.protocol.CapacityQos}: capacity-based QoS, where its formula is written down
 *       once: per-GiB rates with named floors and absolute caps, scaled by a volume's size or used
 *       bytes, resolved by the control plane into the absolute numbers of {@code QosSettings} (the
 *       nodes see only those, with the {@linkplain io.weir.protocol.EffectivePolicy#sources() term}
 *       behind each), and its rules "at every capacity", which the REST API checks. JDK only, like
 *       {@code QosSettings}.</li>
 * </ul>
 */
package io.weir.protocol;
