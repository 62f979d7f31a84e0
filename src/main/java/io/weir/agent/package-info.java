/**
 * The agent of a data node: it receives the node's desired config from the control plane over a
 * WebSocket, applies each snapshot atomically to a {@link io.weir.scheduler.QosExecutor}, answers
 * with an acknowledgement, and keeps the last good snapshot on disk so that the node enforces its
 * policies while the control plane is away. Over the same connection it reports usage: every
 * reporting interval (part of the pushed config) a numbered report of what the scheduler did,
 * kept until acknowledged and sent again after a reconnect.
 *
 * <p>{@link io.weir.agent.QosAgent} is the agent's API (its class comment is the manual);
 * {@link io.weir.agent.AgentListener} hears what it does and may veto a snapshot before it is
 * acknowledged ({@code applying}); {@link io.weir.agent.AgentCommand} runs one standalone
 * ({@code java -jar weir.jar agent}); {@link io.weir.agent.CommandLine} is the option parser of
 * the node commands ({@code agent} and {@code datanode}: one precedence rule, one duration
 * syntax). {@link io.weir.agent.UsageReporter} makes the numbered usage reports from the
 * scheduler's statistics and buffers them until acknowledged (bounded; what overflows becomes a
 * gap the next reports announce); {@code UsageSequences} numbers them so that a restarted agent
 * never reuses a number. {@link io.weir.agent.ConfigTranslator} is
 * the one translation from the wire's {@code DesiredConfig} to the scheduler's
 * {@link io.weir.scheduler.SchedulerConfig}.
 *
 * <p>{@link io.weir.agent.ServerCertificates} keeps a data node's TLS server certificate beside the
 * agent's state (a key made on the node, a PKCS#10 request over the channel, renewal at two thirds
 * of the lifetime); {@link io.weir.agent.ControlPlaneTrust} verifies a {@code wss://} control plane
 * against the cluster CA file the operator gives ({@code --control-plane-ca}), never trusting on
 * first use.
 *
 * <p>Depends on the scheduler, the protocol, the JDK (its {@code java.net.http} WebSocket client),
 * Jackson and BouncyCastle (the node's PKCS#10 request and PEM), and on nothing else: no Spring.
 * The {@code agent} classifier jar holds exactly these three packages, for a Java data node to
 * embed; with server certificates on, bcpkix, bcutil and bcprov go beside it.
 *
 * <p>The wire format: text frames of one JSON object each, {@code hello}, {@code config},
 * {@code ack}, {@code nack}, {@code status}, {@code usage}, {@code usageAck},
 * {@code certificateRequest}, {@code certificate} and {@code error}, see
 * {@link io.weir.protocol.AgentMessage}; heartbeats are WebSocket pings.
 */
package io.weir.agent;
