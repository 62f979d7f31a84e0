/**
 * The agent of a data node: it receives the node's desired config from the control plane over a
 * WebSocket, applies each snapshot atomically to a {@link io.weir.scheduler.QosExecutor}, answers
 * with an acknowledgement, and keeps the last good snapshot on disk so that the node enforces its
 * policies while the control plane is away. Over the same connection it reports usage: every
 * reporting interval (part of the pushed config) a numbered report of what the scheduler did,
 * kept until acknowledged and sent again after a reconnect.
 *
 * <p>{@link io.weir.agent.QosAgent} is the agent's API (the manual follows) and its connection
 * to the control plane; {@link io.weir.agent.AgentConnection} is one WebSocket connection of it,
 * {@code ConfigApplier} puts a snapshot in force (or refuses it) and answers it, and
 * {@code CertificateRenewal} asks for the node's server certificate and renews it;
 * {@link io.weir.agent.AgentListener} hears what it does and may veto a snapshot before it is
 * acknowledged ({@code applying}); {@link io.weir.agent.AgentCommand} runs one standalone
 * ({@code java -jar weir.jar agent}); {@link io.weir.agent.CommandLine} is the option parser of
 * the node commands ({@code agent} and {@code datanode}: one precedence rule, one duration
 * syntax). {@link io.weir.agent.UsageReporter} makes the numbered usage reports from the
 * scheduler's statistics and buffers them until acknowledged (bounded; what overflows, and a
 * report the control plane refuses for good, becomes a gap the next reports announce); {@code UsageSequences} numbers them so that a restarted agent
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
 *
 * <h2>What it does</h2>
 * <pre>
 *   start()
 *     │  1. load the last-known-good snapshot from the state directory ──► executor.reconfigure
 *     │     (a corrupt file is set aside and reported; start-up goes on without it)
 *     ▼
 *   connect ──► WebSocket GET /api/v1/agent/connect, "Authorization: Bearer &lt;node token&gt;"
 *     │  2. send hello{appliedRevision, configDigest, nodeId if the builder named one}
 *     │  3. for each config pushed:  check ─► translate ─► executor.reconfigure ─► listener.applying ─► save to disk ─► listener.applied ─► ack
 *     │                               (refused by any of the first four: keep the previous config, send nack{reason};
 *     │                                a failed save keeps it in force and is tried again at each heartbeat tick)
 *     │  4. every heartbeat interval: ping (while an apply holds the event thread, from the common pool);
 *     │     no pong nor message within the timeout ─► drop the connection
 *     │  5. every reporting interval: a usage report ─► buffer ─► send; usageAck{sequence} ─► forget it
 *     │  6. (serverCertificates) no certificate, or 2/3 of its lifetime gone: new key ─► certificateRequest{csr}
 *     │     ─► certificate{cert, ca} ─► check, store beside the state ─► listener.serverCertificate
 *     ▼
 *   connection lost or refused ──► wait a backoff (exponential, full jitter, capped) ──► connect again
 *                                  (after the next hello: every unacknowledged usage report again, oldest first)
 * </pre>
 * The control plane sends the node's whole desired config (never a delta) when the agent's
 * {@code hello} shows it is behind, and again whenever the config changes. Each snapshot is applied
 * to the executor in one {@link io.weir.scheduler.QosExecutor#reconfigure} call, so IO never sees half of one.
 *
 * <h2>Usage reports</h2>
 * From {@link io.weir.agent.QosAgent#start()} on, a {@link io.weir.agent.UsageReporter} over the executor makes a report every
 * reporting interval, the pushed config's {@link io.weir.protocol.DesiredConfig#usageReportIntervalSeconds()} (10 s
 * until a config says otherwise; a new one takes effect at the next tick). Each report is sent at
 * once if connected and kept either way until the control plane acknowledges it; after every
 * reconnect the agent sends all unacknowledged reports again, in sequence order, and the control
 * plane counts each (node, sequence) once. The buffer is bounded ({@link io.weir.agent.QosAgent.Builder#usageBuffer},
 * default one hour); a report that falls out of it unacknowledged is announced as a gap by the
 * following reports ({@link io.weir.agent.QosAgent#droppedUsageReports()}). Report numbers grow by one per report and
 * are never reused, not even by an agent restarted with an empty state directory: each run starts
 * above the reservation it keeps in the state directory ({@code usage-sequence}) and above the
 * clock's milliseconds. {@link io.weir.agent.QosAgent#reportUsageNow()} closes the current interval at once (before a
 * planned shutdown, or in tests). The buffer lives in memory: what is unacknowledged when the agent
 * stops, and the IO of the interval under way, is not reported by a restarted agent, which starts
 * a new interval; no gap is announced for that loss.
 *
 * <h2>TLS</h2>
 * A {@code https://} (or {@code wss://}) control plane is verified against the cluster CA file
 * given to {@link io.weir.agent.QosAgent.Builder#controlPlaneCa} ({@code --control-plane-ca}), else the JDK's trust store;
 * never trusted on first use ({@link io.weir.agent.ControlPlaneTrust}). An agent built with
 * {@link io.weir.agent.QosAgent.Builder#serverCertificates} also keeps the data node's TLS server certificate
 * ({@link io.weir.agent.ServerCertificates}): after each {@code hello}, and every heartbeat interval, it asks for
 * one when the node has none or two thirds of the current one's lifetime have passed; the key is
 * made on the node and never leaves it; the signed certificate is stored in the state directory
 * and handed to {@link io.weir.agent.AgentListener#serverCertificate}, while the previous one stays in force
 * until then. {@link io.weir.agent.QosAgent#serverCertificate()} is the one in force.
 *
 * <h2>Which node</h2>
 * A node token belongs to exactly one node, and the control plane takes the node from the token:
 * the token alone decides whose config the agent receives, so the agent needs no node id. It
 * learns its node from the snapshots it applies ({@link io.weir.protocol.DesiredConfig#nodeId()}): from the cached
 * one at start-up, then from each pushed one; {@link io.weir.agent.QosAgent#state()} shows it. If the builder names a
 * node ({@link io.weir.agent.QosAgent.Builder#nodeId}), that is a check: the {@code hello} carries it and the control
 * plane refuses the connection if the token belongs to another node, and the agent refuses
 * snapshots (and ignores a cached one) for any other node.
 *
 * <h2>Lifecycle</h2>
 * {@link io.weir.agent.QosAgent#builder()} ... {@link io.weir.agent.QosAgent.Builder#build() build()} makes an agent that does nothing yet.
 * {@link io.weir.agent.QosAgent#start()} applies the cached snapshot (if any) before it returns, then connects in the
 * background; it never fails because the control plane is unreachable. {@link io.weir.agent.QosAgent#close()} closes
 * the connection with a normal close frame, stops the agent's threads and returns; it does not
 * close the executor, which belongs to the caller. An agent is started at most once.
 *
 * <h2>Threads</h2>
 * Everything the agent does (reading messages, applying snapshots, writing the state file, calling
 * the {@link io.weir.agent.AgentListener}, heartbeats, reconnects) happens one task at a time on its event
 * thread, named {@code weir-agent}; {@link io.weir.agent.QosAgent.Builder#scheduler} lets many agents share a pool, each
 * still running its own tasks one at a time. The usage reporter ticks on the same scheduler (once
 * a second: queue-depth samples, and a report when the interval has passed) and hands each report
 * to the event thread to send. The WebSocket's I/O runs on the
 * {@link java.net.http.HttpClient}'s threads. {@link io.weir.agent.QosAgent#state()}, {@link io.weir.agent.QosAgent#reportStatus} and the usage methods may be called from any
 * thread.
 *
 * <h2>When the connection is lost</h2>
 * Nothing changes on the data path: the executor keeps the snapshot it has, which is also on
 * disk, and a restarted agent applies it again before connecting. The agent reports
 * {@code connected=false} and the reason in {@link io.weir.agent.QosAgent#state()}, calls
 * {@link io.weir.agent.AgentListener#disconnected}, waits a random time in {@code [0, min(backoffMax,
 * backoffInitial * 2^failures)]} and connects again; on reconnecting its {@code hello} carries the
 * revision in force and the {@linkplain io.weir.protocol.ConfigDigest digest} of that snapshot, and
 * the control plane answers with the node's current snapshot unless it is exactly that one.
 * {@code failures} counts every lost connection until one has stayed up, with contact, for
 * {@link io.weir.agent.QosAgent.Builder#backoffResetAfter} (a connection accepted and dropped at once is a failure,
 * even if a config was exchanged on it).
 * A connection that stays silent (no message, no pong) longer than the heartbeat timeout is taken
 * as half-open and dropped, so a lost connection is noticed within the timeout plus one heartbeat
 * interval even when no TCP reset ever arrives.
 *
 * <h2>Example: embedding it in a data node</h2>
 * <pre>{@code
 * QosExecutor executor = QosExecutor.builder(SchedulerConfig.builder().defaultTasks().build())
 *         .workers(4).build();
 * QosAgent agent = QosAgent.builder()
 *         .controlPlane(URI.create("https://weir.example.com"))
 *         .token(Files.readString(Path.of("/etc/weir/node-token")).strip())
 *         .stateDir(Path.of("/var/lib/weir/agent"))
 *         .executor(executor)
 *         .listener(new AgentListener() {
 *             public void applying(DesiredConfig config) {
 *                 exports.sync(config.volumes());          // open, resize, close NBD exports; throw to refuse (nack)
 *             }
 *         })
 *         .build();
 * agent.start();                                           // cached policies are in force from here
 * ...
 * executor.submit(volumeId, IoKind.READ, length, () -> disk.read(offset, length));
 * ...
 * agent.close();
 * executor.close();
 * }</pre>
 *
 */
package io.weir.agent;
