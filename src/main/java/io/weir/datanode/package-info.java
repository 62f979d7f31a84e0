/**
 * The reference data node: volumes served over NBD, every request scheduled by the QoS scheduler.
 *
 * <h2>Parts</h2>
 * <ul>
 *   <li>{@link io.weir.datanode.DataNode}: the node. It owns the {@link io.weir.scheduler.QosExecutor},
 *       the NBD server, the volumes and the background tasks, and takes configurations
 *       ({@code DesiredConfig}) through {@code apply} (executor and exports) or {@code applyExports}
 *       (exports, when the embedded agent has applied the executor).</li>
 *   <li>{@link io.weir.datanode.DataNodeCommand}: {@code java -jar weir.jar datanode}; embeds the
 *       agent ({@code --control-plane}) or serves a config file ({@code --config-file}). Its
 *       options are parsed by the agent's {@link io.weir.agent.CommandLine} (one precedence rule and
 *       duration syntax with {@code agent}); the agent's {@link io.weir.agent.AgentListener#applying}
 *       applies the exports, so a config the node cannot serve is nacked. Every second it sends
 *       the node's status (exports, clients, and each export's used bytes: the allocated extents
 *       of its file, {@code DataNode.allocatedBytes}) when it changed. Its agent verifies an
 *       {@code https://} control plane against {@code --control-plane-ca} and keeps the node's TLS
 *       server certificate in its state directory (requested and renewed over the agent channel)
 *       and hands it to the NBD server. On SIGTERM: refuse new clients, drain in-flight
 *       requests, close the agent, close the files.</li>
 *   <li>The protocol: {@code NbdServer} (the listener and selector loop), {@code NbdConnection}
 *       (one client's framing, flow control and closing), {@code NbdReplies} (its replies on
 *       their way: written at once, or queued in order for the selector), {@code NbdTransport} (its
 *       bytes: the socket in clear, or after STARTTLS the {@code tls-channel} library's
 *       non-blocking {@code SSLEngine} channel over a {@code RecordBatchingChannel} that sends the
 *       records of a large reply with one system call per MiB), {@code NbdHandshake} (its
 *       handshake: the greeting, the client's flags, each option framed and answered,
 *       NBD_OPT_STARTTLS included), {@code NbdTlsPeer} (its client as TLS knows it: the switch at
 *       STARTTLS, the certificate's tenant, revocation), {@code NbdTls} (the node's certificate
 *       and whom it lets in: a client certificate's tenant sees that tenant's exports only),
 *       {@code NbdRequest} (one transmission request: its validation, its run by a worker, and
 *       its reply) and {@code ReplyBatch} (the replies of a worker's batch of requests, written
 *       per connection in one gathering write, and their forwards to the copies per link; also
 *       a copy's replies to its primary, and the client replies a replication link's reader
 *       completes from one read). {@code VolumeStore}: the storage, with {@code ChecksumFile} (its
 *       per-block CRCs) and {@code TrimRanges} (its pending trims).
 *       {@code BackgroundTasks}: scrub, gc and flush. {@code BufferPool}: direct buffers. {@code OutOfMemory}: heap or direct.
 *       Replication (see below): {@code Replication}, {@code ReplicatedVolume} (the epoch, the
 *       role and the in-sync set; with {@code ForwardedRequests}, the primary's client path:
 *       forwards, the requests that wait for an echo, the writes held for a step;
 *       {@code ConfirmationHold}, the client requests a restarted primary holds until it is
 *       confirmed, and the answers a deposition owes; {@code CopyResync}, what the replication
 *       driver does per copy: announcements, resync steps, FLUSHes; {@code ReplicaCopy}, a
 *       copy's state and dirty map as its primary sees it; and {@code LastReport}, what a
 *       restarted primary reads of its {@code SyncState}),
 *       {@code ReplicaLink}, {@code ReplicationServer} (with {@code ReceiveBudget}, what its
 *       connections hold of the primaries' requests and write payloads), {@code ReplicationWire},
 *       {@code ReplicationTls}, {@code SyncState}.
 *       {@code LinuxFiles}: {@code fallocate}, {@code lseek(SEEK_DATA/SEEK_HOLE)} and
 *       {@code sync_file_range} through JNA. {@code DurableFiles}: small state files (a primary's
 *       {@code SyncState}, a copy's token) replaced whole and durably. {@code HostPort}: the one parser of {@code host:port}
 *       (the listen options and the copies' replication addresses).</li>
 * </ul>
 *
 * <h2>Threads</h2>
 * <pre>
 *  clients ──TCP──► selector thread (1) ──submit(volume, READ|WRITE, bytes)──► QosExecutor ──► workers (N)
 *                    accept, read, decode,                                     (weights,         file IO, copies,
 *                    handshake replies,                                          limits,          checksums, reply
 *                    queued replies                                              shares)          written to socket
 *  background driver (1): keeps scrub / gc / flush steps queued as background tasks for the volumes
 *                         whose files are open, reports their utilization
 *  replication: a driver (1: links, epoch announcements, resync steps, client writes held for a step;
 *               waits while no volume is replicated),
 *               the listener (1), a reader per link to a copy and per primary connected to this node's copies
 * </pre>
 * There is no thread per connection. The selector thread decodes requests (28-byte headers; the
 * part of a write payload that arrived with its header is copied out of the receive buffer, the
 * rest is read straight into the request's buffer; after a write of 16 KiB or more the receive
 * buffer takes one header at a time, so a stream of large writes is not copied at all, and each
 * such write costs one scattering read of its payload's rest and the next header, the selector
 * reading on, up to {@value io.weir.datanode.NbdServer#ROUND_WRITE_BYTES} bytes, while the socket
 * fills what it offers; over TLS it reads on while the session gives bytes, which the socket
 * would not announce, up to a receive buffer's worth per round, and goes on in the next round,
 * after the others) and
 * submits each to the executor as the foreground flow of its volume with its data size as the
 * cost (the bytes it moves through the volume's file: CACHE and WRITE_ZEROES with NO_HOLE carry
 * no payload but pay their length). A request that moves more than
 * {@value io.weir.datanode.NbdRequest#PIECE_BYTES} bytes runs as
 * pieces of at most that size, each submitted when the one before has run, and is answered after
 * the last: another volume's small request then waits for a piece, not for a 32 MiB read. The
 * selector's loop reads every ready connection first, then writes queued replies, at most
 * {@value io.weir.datanode.NbdServer#ROUND_WRITE_BYTES} bytes per round (a worker's piece), starting
 * from a rotating connection: clients of large reads take turns, and another client's next request
 * waits for no more than that. The only queue outside the scheduler is the socket: a connection stops being read, in the handshake
 * as in transmission, at {@value io.weir.datanode.NbdServer.Limits#DEFAULT_MAX_IN_FLIGHT} requests
 * unanswered (in flight, or with their reply unsent: option replies and requests refused at once
 * with an error count too) or {@value io.weir.datanode.NbdServer.Limits#DEFAULT_MAX_BUFFERED_MIB} MiB
 * of payloads and unsent replies. Workers do the data work and write the reply to the non-blocking
 * socket themselves (a worker running a batch of requests holds their replies for at most 50 µs
 * and writes each connection's in one gathering write); what the socket does not take waits in the
 * connection's reply queue for the selector thread. A client that takes no reply bytes for
 * {@value io.weir.datanode.NbdServer.Limits#DEFAULT_WRITE_STALL_SECONDS} s (settable, as every
 * default here) is disconnected, and so is one that has not finished its handshake
 * {@value io.weir.datanode.NbdServer.Limits#DEFAULT_HANDSHAKE_SECONDS} s after connecting, and one
 * that has begun a request (its header, or a write's payload) and not finished sending it
 * {@value io.weir.datanode.NbdServer.Limits#DEFAULT_REQUEST_SECONDS} s later (time the node itself
 * is not reading from it does not count).
 *
 * <p>Connections past a maximum ({@value io.weir.datanode.NbdServer.Limits#DEFAULT_MAX_CONNECTIONS}),
 * or past a maximum from one source address
 * ({@value io.weir.datanode.NbdServer.Limits#DEFAULT_MAX_CONNECTIONS_PER_SOURCE}), are closed
 * before the greeting; over TLS as many are allowed per tenant, and one past it is closed once its
 * certificate names the tenant. The idle policy: an idle
 * connection in transmission (nothing in flight, unsent or half received) is never closed for
 * being idle, as qemu and nbd-client keep idle connections open for long; only when a newcomer
 * meets a cap is one closed to let it in: the one idle longest, if for at least
 * {@value io.weir.datanode.NbdServer.Limits#DEFAULT_IDLE_EVICT_SECONDS} s,
 * of the newcomer's source at the source cap, or of the source holding the most connections at
 * the node's cap. Dead peers are found by TCP keepalive. A volume's files are opened on first
 * use by an opener thread, never by the selector thread: the connection that waits for them reads
 * nothing meanwhile, the others go on. A failure while the selector thread works for one
 * connection, an {@code OutOfMemoryError} for direct memory included, closes that connection
 * only. Out of heap is not contained ({@code OutOfMemory}): the {@code datanode} command prints a
 * FATAL line and halts with status 3, and its launchers (image, compose, Helm, the demo's child
 * JVMs) add {@code -XX:+ExitOnOutOfMemoryError}, so that a supervisor restarts the node instead of
 * it keeping its port open while serving nobody; if the selector
 * loop itself ever ends, the listening socket is closed (clients are refused, not left hanging)
 * and the failure logged at ERROR.
 *
 * <h2>Buffers</h2>
 * Requests and replies use direct buffers from a pool whose classes are a power of two plus 64
 * bytes (64 B to 32 MiB, each with room for a reply header: a 1 MiB read's reply takes the 1 MiB
 * class), each keeping up to 64 MiB for reuse, so the IO path allocates no native memory per
 * request and the JDK never copies through a temporary direct buffer. A read reply is one
 * buffer: the reply header followed by the data read into it from the file, written to the
 * socket in one call.
 *
 * <p>Beside the per-connection bounds there is one node-wide budget: the bytes of pool buffers
 * acquired and not yet released may not pass {@value io.weir.datanode.BufferPool#DEFAULT_BUDGET}
 * (settable with {@code --buffer-memory}); the buffers the pool keeps idle for reuse count within it too.
 * Write payloads and read reply buffers are taken from it when their request is decoded. A
 * connection whose next request does not fit stops being read (its request header waits in its
 * receive buffer) until buffers are released; the pool then wakes the selector, which lets
 * waiting connections try again in order. The request waits, it is not answered {@code ENOMEM}.
 * Requests above 1 MiB may fill only 7/8 of the budget, so small requests of other clients still
 * find room beside clients of the largest reads and writes. And a volume whose requests hold
 * buffers may take another only while it would hold no more than the budget then leaves free (a
 * dynamic threshold): a request keeps its buffer while the scheduler parks it at its volume's
 * limits, so without this one capped volume's writes filled the budget and every other volume's
 * large requests waited for that volume's limit. One such volume holds at most half the budget,
 * {@code n} of them {@code n/(n+1)}. Other connections go on being served,
 * and a request is let through whatever its size when no buffer is held, so one larger than the
 * budget cannot wait forever. Small replies (headers, errors, block status) are not refused, only
 * counted; if the JVM has no direct memory for a reply buffer anyway the request is answered
 * {@code ENOMEM}, and if not even that buffer can be had the connection is closed, so a client is
 * never left waiting for a request that was dropped.
 *
 * <p>As a copy, a node has a second budget, its own: its primaries' requests read from their
 * connections and not yet answered ({@code ReceiveBudget}: 1,024 of each volume, its queue, and
 * 64 MiB of WRITE payloads in all). A connection whose next request does not fit stops being read until
 * applied requests give room back, so its primary waits on TCP's window instead of the copy's
 * heap filling, or its volume's queue refusing writes (which would put the copy out of sync). It
 * is apart from the pool's budget so that two nodes holding copies of each other's volumes cannot
 * each wait for the other.
 *
 * <h2>Protocol coverage</h2>
 * Fixed newstyle handshake: {@code NBD_OPT_EXPORT_NAME}, {@code ABORT}, {@code LIST},
 * {@code INFO}, {@code GO} (with {@code NBD_INFO_EXPORT}, {@code NAME} and {@code BLOCK_SIZE}),
 * {@code STRUCTURED_REPLY}, {@code LIST_META_CONTEXT} and {@code SET_META_CONTEXT} with
 * {@code base:allocation}, {@code STARTTLS} (TLS 1.3 with a client certificate; a node
 * built to require TLS, the {@code datanode} command's default with a control plane, answers
 * every option before it but {@code ABORT} with {@code NBD_REP_ERR_TLS_REQD} and closes on
 * {@code EXPORT_NAME}); unknown options get {@code NBD_REP_ERR_UNSUP}; unknown exports {@code NBD_REP_ERR_UNKNOWN} with a message. Transmission: {@code READ}
 * (structured: one data chunk, so {@code DF} holds), {@code WRITE} with {@code FUA},
 * {@code FLUSH}, {@code TRIM}, {@code WRITE_ZEROES} with {@code NO_HOLE}, {@code CACHE},
 * {@code BLOCK_STATUS}, {@code DISC}; {@code NBD_FLAG_CAN_MULTI_CONN} (all connections share one
 * file and the page cache). Not implemented: extended headers, {@code RESIZE}, fast zero.
 * Replies go out as requests complete. Requests above 32 MiB, out of range or with unknown flags
 * get {@code EINVAL} ({@code ENOSPC} for writes past the end), a full volume queue {@code ENOMEM},
 * a volume being removed {@code ESHUTDOWN}; a bad magic or unknown client flags end the
 * connection.
 *
 * <h2>Storage</h2>
 * One sparse file per volume ({@code <volume id>.img}) of the volume's size, positional IO;
 * {@code FLUSH} and {@code FUA} force it (fdatasync); once that fails, every later one of the volume
 * fails too until the node restarts, since Linux reports a failed write-back once and then marks
 * the pages clean; the flush task starts write-back of written volumes
 * every second ({@code sync_file_range}) without waiting for the disk. Beside it {@code <volume id>.crc}, a CRC32C per 4 KiB
 * block, which scrub verifies. Trims are recorded (the whole 4 KiB blocks in them) and punched
 * later by gc; zeroes without
 * {@code NO_HOLE} punch at once, with it they are written. Block status comes from
 * {@code SEEK_DATA}/{@code SEEK_HOLE}, so holes are the filesystem's. Every use of the files pins
 * them; a closed volume's descriptors close after the last pin ({@code VolumeStore}). A config is
 * applied all or nothing, and after the first one the files of volumes it does not name are moved
 * to {@code orphans/} ({@code DataNode}).
 *
 * <h2>Replication</h2>
 * A volume whose config carries a {@code ReplicationConfig} has a copy on each of its nodes; only
 * its primary exports it. The primary answers a client's write, trim, write-zeroes or flush once
 * it is done locally and every in-sync copy has done it as durably as asked (FUA and FLUSH are
 * repeated on the copies). Reads are served locally.
 * <pre>
 *  client ─► primary: worker does the request locally ─► ReplicaLink (one per peer node, requests
 *            batched per write) ══ TCP, mutual TLS with node certificates ══► ReplicationServer on
 *            the copy's node ─► its scheduler (the volume's foreground flow) ─► applied ─► reply
 *            ─► the primary's link reader ─► all copies answered ─► NBD reply to the client
 * </pre>
 * Requests and replies are batched both ways: a primary's worker running a batch of client
 * writes holds their forwards and writes them to each copy together, a copy's worker running a
 * batch writes its replies to the primary together, and the primary's link reader writes the
 * client replies that one read of a copy's answers completes per connection in one write
 * ({@code ReplyBatch}), holding none across an answer whose handling may wait for the disk.
 * The copy runs what its primary sends as {@code IoKind.REPLICA}: under the volume's weight and
 * caps like a write, but counted in the volume's replica ops and bytes, not in its reads and
 * writes, so that each client request counts once over the volume's nodes.
 * Safety rests on two numbers from the control plane ({@code ReplicationConfig}): the
 * <em>epoch</em>, carried by every node-to-node request (a node refuses a lower one and, as a
 * primary, stops serving when it meets a higher one: a deposed primary acknowledges no write; a copy
 * applies a request under a lock that a change of epoch waits for, so none lands after the
 * change), and
 * the <em>sync sequence</em>: a copy that fails a request (or answers nothing for 20 s with one
 * outstanding, {@code ReplicaLink}'s watchdog) leaves the in-sync set, and the primary
 * acknowledges writes without it only once a config echoes the sequence of that change, so the
 * control plane never promotes a copy that misses an acknowledged write. Requests wait meanwhile
 * (the node's status goes out at once, and again every 5 s until the echo comes back with a push:
 * the control plane may have failed to store it). The rules are
 * in {@code ReplicatedVolume}.
 *
 * <p>Resync: the primary keeps a dirty map (64 KiB regions) for each copy out of sync; a copy
 * whose link comes back gets every new write and its dirty regions copied by the scheduler's
 * {@code replication} background task, up to 1 MiB a step, two steps at a time; a copy the config
 * names out of sync (new, or a deposed primary), or that answered a FLUSH with an error, is
 * wholly dirty, as is one whose data file is not the one the primary wrote to (its disk
 * replaced: the file holds no token, or another than the primary gave it, {@code NEW_COPY};
 * asked with a PING on every new connection, rule 8); one
 * that fails anything is also dirty where it answered writes since the last FLUSH it answered
 * (not yet forced there: the failure may be its node losing power); the driver sends a copy a
 * FLUSH of its own once it has held a write unforced for 5 s, which bounds that. With
 * nothing left to copy, the copy is sent a FLUSH and rejoins once that is answered. A copy's node
 * takes a primary's new connection as superseding its older ones (it waits for what they were
 * applying, and drops what they left queued), so no request of a failed connection lands after
 * the resync; a connection's first frame, a hello, names the sending node, which over TLS must be
 * the node of its certificate, and a copy takes a volume's requests only from the nodes its config
 * names for that volume ({@code NOT_A_COPY} to any other, whatever certificate it holds). A write of more than 1 MiB is applied on a copy in pieces, as the
 * primary ran it, so a promotion or a superseding connection waits for a piece. A promoted primary copies itself again to the copies in sync, as a restarted one
 * does (below). The task's utilization grows with
 * how long a volume has been under-replicated (to 1 after five minutes), which a dynamic share
 * turns into urgency. Dirty maps live in memory: a primary that restarts copies its out-of-sync
 * copies whole, and copies the volume again to those in sync (they stay in sync meanwhile), since
 * a write in flight when it stopped may be in its file and not theirs. Until its copies in sync
 * (or the control plane's echo) confirm that no copy was promoted meanwhile, it holds its
 * clients' requests, counted in flight, and starts them once that is decided. The in-sync set it
 * last reported, and every copy it reported in sync since the control plane last echoed its set,
 * are kept on disk ({@code SyncState}, {@code <id>.rep}) before the report goes out, since the
 * config it kept may predate a copy's joining, which the control plane may have taken (and
 * promoted); with such a copy out of sync after the restart, writes wait for the echo.
 *
 * <p>Depends on the scheduler, the protocol, the agent, Jackson, tls-channel (TLS over the
 * selector's non-blocking sockets, for NBD and replication), JNA and the JDK (its HotSpot
 * management API for the direct memory limit); never on Spring.
 */
package io.weir.datanode;
