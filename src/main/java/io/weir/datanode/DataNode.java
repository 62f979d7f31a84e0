package io.weir.datanode;

import io.weir.protocol.AgentMessage;
import io.weir.protocol.DesiredConfig;
import io.weir.protocol.TenantConfig;
import io.weir.protocol.VolumeConfig;
import io.weir.scheduler.QosExecutor;
import io.weir.scheduler.SchedulerConfig;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The reference data node: serves every volume of its {@link DesiredConfig} over NBD, with each
 * request run by a {@link QosExecutor} as the foreground flow of its volume, and runs the
 * background tasks (scrub, gc, flush) under their CPU shares.
 *
 * <h2>Life of a configuration</h2>
 * A config arrives through {@link #apply} (the node applies it to its executor too) or, where an
 * agent has already applied it to the executor, through {@link #applyExports}. Either way:
 * <ul>
 *   <li>a new volume gets its sparse file (kept if it exists: a restart serves the same data) and
 *       an export named {@code tenant/volume};</li>
 *   <li>a volume that grew is extended (data kept); new connections see the new size, open ones
 *       keep the size they negotiated; a shrink is refused ({@link IllegalArgumentException});</li>
 *   <li>a removed volume's export disappears at once, its open connections answer what is in
 *       flight and close, and only then are its files deleted. A volume that comes back (same id)
 *       while its connections still drain is taken back with its files and data: new connections
 *       are served at once, and its files are not deleted.</li>
 * </ul>
 * Weights, limits, reservations and task shares take effect at once through the executor; open
 * connections stay up.
 *
 * <h2>All or nothing</h2>
 * A config is applied in two steps. First everything that can fail and that no client sees: new
 * volumes' files are created, grown volumes' files are extended on disk. If that fails, the files
 * this call created are removed, {@link #apply} puts the executor back on the previous config, and
 * the exception is thrown: clients, the scheduler and {@link #revision()} still see the previous
 * config. Then the step that cannot fail: sizes, names and the export table change at once.
 *
 * <h2>Files no config names</h2>
 * After the first config a node applies (cached, from a file or pushed), and only then, the data
 * dir is swept once: files named {@code <uuid>.img}, {@code <uuid>.crc} or {@code <uuid>.rep} of volumes that this
 * config does not name (a volume deleted while the node was down, or a crash while one drained)
 * are moved to {@value #QUARANTINE_DIR}/ beside them, with a warning each; nothing else in the
 * directory is touched. They are never deleted by the node: if a later config names the volume
 * again, its files come back with their data; an operator deletes what is not wanted. Before the
 * first config nothing is swept, since a volume not yet known may simply be in a config that has
 * not arrived. A data dir belongs to one node: a node locks it ({@code .lock}) from its start to
 * its close, and a second node over it is refused at start, since it would set aside the first's
 * files.
 *
 * <h2>Example</h2>
 * <pre>{@code
 * try (DataNode node = DataNode.builder().dataDir(dir).listen(new InetSocketAddress("127.0.0.1", 10809))
 *         .workers(4).build()) {
 *     node.apply(desiredConfig);          // exports "tenant/volume" for each volume
 *     // nbdinfo nbd://127.0.0.1:10809/acme/db1
 * }
 * }</pre>
 *
 * <h2>Thread safety</h2>
 * All public methods may be called from any thread; configuration changes are serialised.
 */
public final class DataNode implements AutoCloseable {

    private static final System.Logger LOG = System.getLogger(DataNode.class.getName());

    /** Subdirectory of the data dir where files of volumes that no applied config names are set aside. */
    public static final String QUARANTINE_DIR = "orphans";

    private final Path dataDir;
    /** This node's claim on the data dir, released by {@link #close}. */
    private final DataDirLock dataDirLock;
    private final QosExecutor executor;
    private final boolean ownsExecutor;
    private final BufferPool pool;
    /** Tests: the service time each volume adds to its transfers (null: none). */
    private final VolumeStore.ServiceTime serviceTime;
    private final NbdServer server;
    /** The NBD server's TLS identity and clients: the agent's certificate, each config's PKI. */
    private final NbdTls tls;
    private final BackgroundTasks background;
    private final Replication replication;
    private final java.util.concurrent.ExecutorService bypass;

    /** Current volumes by id and by export name; replaced whole under {@code this}. */
    private volatile Map<String, VolumeStore> byId = Map.of();
    private volatile Map<String, VolumeStore> byName = Map.of();
    private final List<VolumeStore> removing = new CopyOnWriteArrayList<>();
    /**
     * Volumes whose files have been opened, until they are closed: the only ones with background
     * work (writes to flush, trims to reclaim, blocks to scrub all need open files). The
     * background driver looks at these instead of every configured volume, which it did 20 times
     * a second (10,000 volumes: a copy and two scans of 10,000 per tick).
     */
    private final Set<VolumeStore> opened = ConcurrentHashMap.newKeySet();
    private volatile long revision;
    /** Whether the data dir was swept for files of unknown volumes (after the first applied config); guarded by this. */
    private boolean swept;

    private DataNode(Builder b, DataDirLock dataDirLock) throws IOException {
        this.dataDir = b.dataDir;
        this.dataDirLock = dataDirLock;
        this.pool = b.pool != null ? b.pool : new BufferPool(b.bufferBudget);
        this.serviceTime = b.serviceTime;
        this.ownsExecutor = b.executor == null;
        this.executor = b.executor != null ? b.executor
                : QosExecutor.builder(SchedulerConfig.builder().defaultTasks().build()).workers(b.workers)
                        .threadFactory(workerThreads()).anticipation(b.anticipation)
                        .batchListener(new ReplyBatch(b.replyHold.toNanos())).build();
        NbdServer.Exports exports = new NbdServer.Exports() {
            @Override
            public VolumeStore lookup(String name) {
                return byName.get(name);
            }

            @Override
            public Collection<VolumeStore> all() {
                return byName.values();
            }
        };
        NbdServer.Limits limits = new NbdServer.Limits(b.maxInFlight, b.maxBufferedBytes, b.writeStallTimeout.toNanos(),
                b.handshakeTimeout.toNanos(), b.maxConnections, b.maxConnectionsPerSource, b.requestTimeout.toNanos(),
                b.idleEvictAfter.toNanos());
        this.bypass = b.qos ? null : java.util.concurrent.Executors.newFixedThreadPool(b.workers, workerThreads());
        this.tls = new NbdTls(b.tlsRequired);
        try {
            this.server = new NbdServer(b.listen, exports, executor, bypass, pool, limits, tls);
        } catch (IOException e) {
            e = e instanceof java.net.BindException ? new ListenException(ListenException.Listener.NBD, b.listen, e) : e;
            if (ownsExecutor) {
                executor.close();
            }
            if (bypass != null) {
                bypass.shutdown();
            }
            throw e;
        }
        try {
            this.replication = new Replication(executor, tls, b.replicationListen, b.configFileOnly, b.replicationReceiveBudget);
        } catch (IOException e) {
            e = e instanceof java.net.BindException
                    ? new ListenException(ListenException.Listener.REPLICATION, b.replicationListen, e) : e;
            server.close();
            if (ownsExecutor) {
                executor.close();
            }
            throw e;
        }
        this.background = new BackgroundTasks(executor, () -> {
            reapRemoved();
            return openVolumes();
        }, b.scrubPeriod.toNanos());
    }

    private static java.util.concurrent.ThreadFactory workerThreads() {
        java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
        return r -> {
            Thread t = new Thread(r, "weir-io-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** Returns a builder. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * The node's TLS server certificate (from its agent): from now on NBD clients may negotiate
     * TLS (NBD_OPT_STARTTLS) with it; a renewal applies to new handshakes.
     */
    public void serverCertificate(io.weir.agent.ServerCertificate certificate) {
        tls.serverCertificate(certificate);
        LOG.log(Level.INFO, "NBD over TLS with a certificate valid until {0}", certificate.certificate().getNotAfter().toInstant());
    }

    /**
     * Applies a configuration: to the executor (weights, limits, task shares), then to the exports.
     *
     * @throws IllegalArgumentException if the config is invalid (unknown tenant, a volume shrinks,
     *     an export name twice) — nothing is changed then but what it revokes ({@link #refused})
     */
    public synchronized void apply(DesiredConfig config) throws IOException {
        try {
            check(config);
        } catch (RuntimeException e) {
            refused(config);
            throw e;
        }
        SchedulerConfig previous = executor.config();
        executor.reconfigure(SchedulerConfigs.from(config));
        try {
            applyExports(config);
        } catch (IOException | RuntimeException e) {
            executor.reconfigure(previous);
            refused(config);
            throw e;
        }
    }

    /** The node the last applied config was for (null before one). */
    private volatile UUID appliedNodeId;

    /**
     * A config this node did not apply (it failed a check, or its exports could not be applied):
     * what it revokes, or no longer names, still takes effect at once, and its live connections
     * close; it grants nothing (a certificate it adds waits for a config that is applied). A
     * revocation does not wait for the rest of its snapshot to become applicable.
     */
    public void refused(DesiredConfig config) {
        UUID node = appliedNodeId;
        if (node != null && !node.equals(config.nodeId())) {
            return; // another node's snapshot, refused as such: it says nothing of whom this node lets in
        }
        tls.restrict(config.tls());
        server.revalidateTls();
    }

    /**
     * Applies a configuration's volumes to the exports only, for when the executor has already
     * been reconfigured (by the agent).
     *
     * @throws IllegalArgumentException if a volume shrinks or names an unknown tenant
     */
    public synchronized void applyExports(DesiredConfig config) throws IOException {
        Map<UUID, String> tenants = check(config);
        Map<String, VolumeStore> current = byId;
        // 1. prepare: all that can fail, nothing a client can see (new files, files grown on disk)
        Map<String, VolumeStore> nextById = new HashMap<>();
        Map<String, VolumeStore> nextByName = new HashMap<>();
        List<VolumeStore> madeHere = new ArrayList<>();
        try {
            for (VolumeConfig vc : config.volumes()) {
                String id = vc.id().toString();
                String name = tenants.get(vc.tenantId()) + "/" + vc.name();
                VolumeStore v = current.get(id);
                if (v == null) {
                    v = draining(id); // back while its connections drain: the same files, the same VolumeStore
                }
                if (v == null) {
                    boolean existed = unquarantine(id);
                    v = VolumeStore.create(dataDir, id, name, vc.sizeBytes());
                    v.tenantId = vc.tenantId();
                    v.serviceTime = serviceTime;
                    VolumeStore created = v;
                    v.onOpen = () -> opened.add(created);
                    if (!existed) {
                        madeHere.add(v);
                    } else {
                        v.fromEarlierRun = true;
                    }
                } else if (vc.sizeBytes() > v.size()) {
                    v.growFile(vc.sizeBytes());
                }
                nextById.put(id, v);
                if (vc.servedBy(config.nodeId())) {
                    nextByName.put(name, v); // a copy that is not the primary serves no export
                }
            }
            tls.config(config.tls(), tenants.keySet()); // whole or not at all; the last step that may fail
        } catch (IOException | RuntimeException e) {
            for (VolumeStore v : madeHere) {
                try {
                    v.delete();
                } catch (UncheckedIOException again) {
                    LOG.log(Level.WARNING, "removing " + v.dataFile() + " of a config not applied: " + again.getMessage());
                }
            }
            throw e;
        }
        // 2. commit: cannot fail
        appliedNodeId = config.nodeId();
        server.revalidateTls(); // a revoked certificate's connections close now
        for (VolumeConfig vc : config.volumes()) {
            VolumeStore v = nextById.get(vc.id().toString());
            if (vc.sizeBytes() > v.size()) {
                v.commitSize(vc.sizeBytes());
            }
            v.exportName = tenants.get(vc.tenantId()) + "/" + vc.name();
            v.tenantId = vc.tenantId();
            if (v.removed) {
                removing.remove(v);
                v.removed = false;
            }
        }
        List<VolumeStore> gone = new ArrayList<>();
        for (VolumeStore v : current.values()) {
            if (!nextById.containsKey(v.id)) {
                gone.add(v);
            }
        }
        byId = Map.copyOf(nextById);
        replication.configure(config, byId);
        byName = Map.copyOf(nextByName);
        revision = config.revision();
        for (VolumeStore v : current.values()) {
            if (nextById.get(v.id) == v && !nextByName.containsValue(v) && !v.clients.isEmpty()) {
                server.closeGracefully(new ArrayList<>(v.clients)); // no longer the primary: its clients go
            }
        }
        for (VolumeStore v : gone) {
            v.removed = true;
            removing.add(v);
            server.closeGracefully(new ArrayList<>(v.clients));
        }
        reapRemoved();
        if (!swept) {
            swept = true;
            sweepOrphans();
        }
    }

    /**
     * Sets aside the files in the data dir of volumes that the config just applied does not name
     * (see "Files no config names"): moves them to {@link #QUARANTINE_DIR}, with a log line each.
     * Caller holds {@code this}.
     */
    private void sweepOrphans() {
        Path quarantine = dataDir.resolve(QUARANTINE_DIR);
        try (java.util.stream.Stream<Path> files = Files.list(dataDir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                String id = volumeIdOf(f.getFileName().toString());
                if (id == null || byId.containsKey(id) || draining(id) != null || !Files.isRegularFile(f)) {
                    continue;
                }
                Files.createDirectories(quarantine);
                Files.move(f, quarantine.resolve(f.getFileName()), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                LOG.log(Level.WARNING, "{0} belongs to volume {1}, which the config in force (revision {2}) does not name:"
                        + " moved to {3} (it comes back if the volume does; delete it there once it is not wanted)",
                        f.getFileName(), id, revision, quarantine);
            }
        } catch (IOException | UncheckedIOException e) {
            LOG.log(Level.WARNING, "sweeping the data dir for files of unknown volumes: " + e);
        }
    }

    /** The suffixes of a volume's files after its id: data, checksums, kept in-sync set. */
    private static final List<String> VOLUME_FILE_SUFFIXES = List.of(".img", ".crc", SyncState.SUFFIX, VolumeStore.TOKEN_SUFFIX);

    /** The volume id of a volume file name ({@code <uuid>} and one of {@link #VOLUME_FILE_SUFFIXES}), else null. */
    private static String volumeIdOf(String fileName) {
        String suffix = VOLUME_FILE_SUFFIXES.stream().filter(fileName::endsWith).findFirst().orElse(null);
        if (suffix == null) {
            return null;
        }
        String id = fileName.substring(0, fileName.length() - suffix.length());
        try {
            return UUID.fromString(id).toString().equals(id) ? id : null;
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /**
     * Moves volume {@code id}'s files back from {@link #QUARANTINE_DIR} if they were set aside and
     * none are in the data dir; true if its data file exists in the data dir afterwards.
     */
    private boolean unquarantine(String id) throws IOException {
        Path img = dataDir.resolve(id + ".img");
        if (Files.exists(img)) {
            return true;
        }
        Path quarantine = dataDir.resolve(QUARANTINE_DIR);
        if (!Files.exists(quarantine.resolve(id + ".img"))) {
            return false;
        }
        for (String ext : VOLUME_FILE_SUFFIXES) {
            Path q = quarantine.resolve(id + ext);
            if (Files.exists(q)) {
                Files.move(q, dataDir.resolve(id + ext));
            }
        }
        LOG.log(Level.INFO, "volume {0} is configured again: its files are back from {1}", id, quarantine);
        return true;
    }

    /**
     * Checks a config without applying it: every volume names a known tenant, no export name
     * twice, no volume shrinks.
     *
     * @throws IllegalArgumentException naming the problem
     */
    public void validate(DesiredConfig config) {
        check(config);
    }

    /** Validates ids, names and sizes; returns tenant names by id. */
    private Map<UUID, String> check(DesiredConfig config) {
        replication.check(config);
        Map<UUID, String> tenants = new HashMap<>();
        for (TenantConfig t : config.tenants()) {
            tenants.put(t.id(), t.name());
        }
        Map<String, VolumeStore> current = byId;
        Map<String, String> names = new HashMap<>();
        Set<UUID> ids = new java.util.HashSet<>();
        for (VolumeConfig vc : config.volumes()) {
            if (!ids.add(vc.id())) { // two stores over one file, each with its own locks
                throw new IllegalArgumentException("two volumes have the id " + vc.id());
            }
            String tenant = tenants.get(vc.tenantId());
            if (tenant == null) {
                throw new IllegalArgumentException("volume " + vc.id() + " names unknown tenant " + vc.tenantId());
            }
            if (vc.sizeBytes() < 0 || vc.sizeBytes() > AgentMessage.Export.MAX_SIZE_BYTES) {
                throw new IllegalArgumentException("volume " + vc.id() + " has a size outside 0 to 2^62 bytes: "
                        + vc.sizeBytes());
            }
            String name = tenant + "/" + vc.name();
            if (names.put(name, vc.id().toString()) != null) {
                throw new IllegalArgumentException("two volumes are exported as '" + name + "'");
            }
            VolumeStore v = current.get(vc.id().toString());
            if (v == null) {
                v = draining(vc.id().toString());
            }
            if (v != null && vc.sizeBytes() < v.size()) {
                throw new IllegalArgumentException("volume " + name + " cannot shrink from " + v.size() + " to "
                        + vc.sizeBytes() + " bytes");
            }
        }
        return tenants;
    }

    /** The configured volumes whose files are open, for the background tasks; forgets closed ones. */
    List<VolumeStore> openVolumes() {
        Map<String, VolumeStore> current = byId;
        List<VolumeStore> l = new ArrayList<>(opened.size());
        for (VolumeStore v : opened) {
            if (!v.isOpen()) {
                opened.remove(v);
            } else if (current.get(v.id) == v) {
                l.add(v);
            }
        }
        return l;
    }

    /** The removed volume {@code id} whose connections are still closing, or null. */
    private VolumeStore draining(String id) {
        for (VolumeStore v : removing) {
            if (v.id.equals(id)) {
                return v;
            }
        }
        return null;
    }

    /**
     * Deletes the files of removed volumes whose last connection has closed. Synchronized with
     * {@link #applyExports}, which may take a draining volume back.
     */
    private synchronized void reapRemoved() {
        for (VolumeStore v : removing) {
            if (v.clients.isEmpty()) {
                removing.remove(v);
                try {
                    v.delete();
                } catch (UncheckedIOException e) {
                    LOG.log(Level.WARNING, "deleting volume " + v.exportName + ": " + e.getMessage());
                }
            }
        }
    }

    /** The volume exported as {@code name}, or null. */
    VolumeStore volume(String name) {
        return byName.get(name);
    }

    /** The revision of the config applied last (0 before any). */
    public long revision() {
        return revision;
    }

    /** The NBD server (tests reach its selector thread through it). */
    NbdServer server() {
        return server;
    }

    /** The address the NBD server listens on. */
    public InetSocketAddress listenAddress() {
        return server.localAddress();
    }

    /** The executor that runs every request; the agent applies configs to it. */
    public QosExecutor executor() {
        return executor;
    }

    /** host:port of the replication listener for peer nodes, or null if the node has none. */
    public String replicationAddress() {
        return replication.address();
    }

    /**
     * Whether a volume this node is the primary of waits for the control plane to echo the in-sync
     * set it reported (its writes are held meanwhile): its status should go out again if no echo
     * comes.
     */
    public boolean replicationAwaitingEcho() {
        return replication.awaitingEcho();
    }

    /** How the copies of each replicated volume this node is the primary of stand, for its status. */
    public List<AgentMessage.ReplicationStatus> replicationStatus() {
        return replication.status();
    }

    /**
     * Waits up to {@code max} for a change its status must report at once (a copy of a volume it
     * is the primary of left or joined the in-sync set, or it was fenced) after change {@code seen};
     * returns the count of such changes, to pass as {@code seen} next time.
     */
    public long awaitReplicationChange(long seen, Duration max) throws InterruptedException {
        return replication.awaitChange(seen, max.toNanos());
    }

    /** The node's replication (tests). */
    Replication replication() {
        return replication;
    }

    /** One export as reported in the node's status. */
    public record ExportStatus(UUID volumeId, String name, long sizeBytes, int clients) {
    }

    /** The exports, their sizes and their connected clients, sorted by name. */
    public List<ExportStatus> exports() {
        List<ExportStatus> list = new ArrayList<>();
        for (VolumeStore v : byName.values()) {
            list.add(new ExportStatus(UUID.fromString(v.id), v.exportName, v.size(), v.clients.size()));
        }
        list.sort((a, b) -> a.name().compareTo(b.name()));
        return list;
    }

    /**
     * Bytes allocated in each export's file (its data extents, as {@code base:allocation} sees
     * them), by volume id; an export whose file cannot be read now is left out. Walks the files'
     * extents, so it is for a periodic report, not the IO path.
     */
    public Map<UUID, Long> allocatedBytes() {
        Map<UUID, Long> used = new HashMap<>();
        for (VolumeStore v : byName.values()) {
            try {
                used.put(UUID.fromString(v.id), v.allocatedBytes());
            } catch (IOException | RuntimeException e) {
                // closed or removed meanwhile: reported next time
            }
        }
        return used;
    }

    /** Open NBD connections, in handshake or transmission. */
    public int connectionCount() {
        return server.connectionCount();
    }

    /** Data blocks verified by scrub so far, and those that failed verification. */
    public long[] scrubCounts() {
        long ok = 0;
        long bad = 0;
        for (VolumeStore v : byId.values()) {
            ok += v.scrubbedBlocks.get();
            bad += v.checksumMismatches.get();
        }
        return new long[] {ok, bad};
    }

    /** Bytes trimmed by clients and not yet reclaimed by gc. */
    public long pendingTrimBytes() {
        long t = 0;
        for (VolumeStore v : byId.values()) {
            t += v.pendingTrimBytes();
        }
        return t;
    }

    /**
     * The first half of an orderly stop: refuses new clients (the listening socket is closed), lets
     * every open connection answer what it has in flight and close, and waits up to
     * {@code timeout} for that. Exports, the executor and the files stay as they are; call
     * {@link #close} after.
     *
     * @return true if every connection closed in time (the rest are cut by {@link #close})
     */
    public boolean drain(Duration timeout) throws InterruptedException {
        server.stopAccepting();
        return server.drain(timeout.toNanos());
    }

    /**
     * Stops serving: closes the listener and every connection, stops the background tasks, drains
     * and stops the executor (if the node created it; what is queued then runs free of the
     * volumes' limits) and flushes and closes the volumes.
     */
    @Override
    public void close() {
        replication.close();
        server.close();
        background.close();
        if (bypass != null) {
            bypass.shutdown();
            try {
                bypass.awaitTermination(30, java.util.concurrent.TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (ownsExecutor) {
            // what is still queued belongs to the connections just cut, and returns at once: run
            // it now, not at its volumes' limits, or a capped volume's queue holds the stop for minutes
            try {
                executor.reconfigure(executor.config().withoutLimits());
            } catch (RuntimeException e) {
                LOG.log(System.Logger.Level.WARNING, "stopping: the volumes' limits stay in force: " + e);
            }
            executor.close();
        }
        for (VolumeStore v : byId.values()) {
            v.close();
        }
        for (VolumeStore v : removing) {
            v.close();
        }
        dataDirLock.close();
    }

    /** A listener of the node could not take its address (in use, not local). */
    public static final class ListenException extends java.net.BindException {
        private static final long serialVersionUID = 1L;

        /** Which listener. */
        public enum Listener { NBD, REPLICATION }

        private final Listener listener;

        ListenException(Listener listener, InetSocketAddress address, IOException cause) {
            super("cannot listen for " + (listener == Listener.NBD ? "NBD" : "replication") + " on "
                    + address.getHostString() + ":" + address.getPort() + ": " + cause.getMessage());
            this.listener = listener;
            initCause(cause);
        }

        /** Which listener failed. */
        public Listener listener() {
            return listener;
        }
    }

    /** Settings of a {@link DataNode}. */
    public static final class Builder {
        private Path dataDir;
        private InetSocketAddress listen = new InetSocketAddress("127.0.0.1", 10809);
        private int workers = Runtime.getRuntime().availableProcessors();
        private QosExecutor executor;
        private Duration scrubPeriod = Duration.ofHours(1);
        private Duration writeStallTimeout = Duration.ofNanos(NbdServer.Limits.defaults().writeStallNanos());
        private int maxInFlight = NbdServer.Limits.defaults().maxInFlight();
        private long maxBufferedBytes = NbdServer.Limits.defaults().maxBufferedBytes();
        private boolean qos = true;
        private boolean tlsRequired;
        private boolean anticipation = true;
        private Duration replyHold = Duration.ofNanos(ReplyBatch.DEFAULT_HOLD_NANOS);
        private Duration handshakeTimeout = Duration.ofNanos(NbdServer.Limits.defaults().handshakeNanos());
        private int maxConnections = NbdServer.Limits.defaults().maxConnections();
        private int maxConnectionsPerSource = NbdServer.Limits.defaults().maxConnectionsPerSource();
        private Duration requestTimeout = Duration.ofNanos(NbdServer.Limits.defaults().requestNanos());
        private Duration idleEvictAfter = Duration.ofNanos(NbdServer.Limits.defaults().idleEvictNanos());
        private long bufferBudget = BufferPool.defaultBudget();
        private BufferPool pool;
        private VolumeStore.ServiceTime serviceTime;
        private InetSocketAddress replicationListen;
        private long replicationReceiveBudget = ReceiveBudget.DEFAULT_BYTES;
        private boolean configFileOnly;

        private Builder() {
        }

        /** Directory of the volume files (created if missing). Required. */
        public Builder dataDir(Path dir) {
            this.dataDir = dir;
            return this;
        }

        /** Address to listen on; port 0 picks a free one. Default 127.0.0.1:10809. */
        public Builder listen(InetSocketAddress address) {
            this.listen = Objects.requireNonNull(address);
            return this;
        }

        /** Scheduler worker threads; default: available processors. Ignored with {@link #executor}. */
        public Builder workers(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("workers must be >= 1");
            }
            this.workers = n;
            return this;
        }

        /** Use this executor (e.g. one an agent configures) instead of creating one; the caller closes it. */
        public Builder executor(QosExecutor executor) {
            this.executor = executor;
            return this;
        }

        /** How often a scrub pass starts; {@link Duration#ZERO} scrubs continuously. Default 1 hour. */
        public Builder scrubPeriod(Duration period) {
            this.scrubPeriod = Objects.requireNonNull(period);
            return this;
        }

        /**
         * How long a client may leave its replies unread before it is disconnected. Default
         * {@value NbdServer.Limits#DEFAULT_WRITE_STALL_SECONDS} s.
         */
        public Builder writeStallTimeout(Duration timeout) {
            this.writeStallTimeout = Objects.requireNonNull(timeout);
            return this;
        }

        /**
         * How long a client may take from connecting to entering transmission (NBD_OPT_GO or
         * NBD_OPT_EXPORT_NAME) before it is disconnected. Default
         * {@value NbdServer.Limits#DEFAULT_HANDSHAKE_SECONDS} s.
         */
        public Builder handshakeTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("handshakeTimeout must be positive");
            }
            this.handshakeTimeout = timeout;
            return this;
        }

        /**
         * Open connections (in handshake or transmission) beyond which new ones are refused.
         * Default {@value NbdServer.Limits#DEFAULT_MAX_CONNECTIONS}.
         */
        public Builder maxConnections(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("maxConnections must be >= 1");
            }
            this.maxConnections = n;
            return this;
        }

        /**
         * Open connections from one source address (and over TLS, of one tenant) beyond which new
         * ones from it are refused, unless one of its connections idle long enough can be
         * evicted ({@link #idleEvictAfter}). Default {@value NbdServer.Limits#DEFAULT_MAX_CONNECTIONS_PER_SOURCE}.
         */
        public Builder maxConnectionsPerSource(int n) {
            if (n < 1) {
                throw new IllegalArgumentException("maxConnectionsPerSource must be >= 1");
            }
            this.maxConnectionsPerSource = n;
            return this;
        }

        /**
         * How long a request may take to arrive once its first byte has (its header, then a
         * write's payload); a client slower than that is disconnected. Default
         * {@value NbdServer.Limits#DEFAULT_REQUEST_SECONDS} s.
         */
        public Builder requestTimeout(Duration timeout) {
            if (timeout.isNegative() || timeout.isZero()) {
                throw new IllegalArgumentException("requestTimeout must be positive");
            }
            this.requestTimeout = timeout;
            return this;
        }

        /**
         * How long a connection in transmission must have been idle (nothing in flight, nothing
         * unsent, nothing received) before it may be closed to let a newcomer in when the node or
         * the newcomer's source is at its connection cap. Idle connections are never closed
         * otherwise. Default {@value NbdServer.Limits#DEFAULT_IDLE_EVICT_SECONDS} s.
         */
        public Builder idleEvictAfter(Duration idle) {
            if (idle.isNegative()) {
                throw new IllegalArgumentException("idleEvictAfter must not be negative");
            }
            this.idleEvictAfter = idle;
            return this;
        }

        /**
         * Requests in flight per connection before the node stops reading from it. Default
         * {@value NbdServer.Limits#DEFAULT_MAX_IN_FLIGHT}.
         */
        public Builder maxInFlight(int n) {
            this.maxInFlight = n;
            return this;
        }

        /**
         * Payload and reply bytes per connection before the node stops reading from it. Default
         * {@value NbdServer.Limits#DEFAULT_MAX_BUFFERED_MIB} MiB.
         */
        public Builder maxBufferedBytes(long n) {
            this.maxBufferedBytes = n;
            return this;
        }

        /**
         * With {@code false}, client requests bypass the scheduler and run on a plain pool of the
         * same number of workers: no weights, limits or shares. For measuring what QoS costs;
         * background tasks still run through the executor. Default true.
         */
        public Builder qos(boolean on) {
            this.qos = on;
            return this;
        }

        /**
         * With {@code true}, NBD clients must use TLS: before NBD_OPT_STARTTLS every option but
         * NBD_OPT_ABORT is refused with NBD_REP_ERR_TLS_REQD, and NBD_OPT_EXPORT_NAME closes the
         * connection; until the node has its certificate ({@link #serverCertificate}) nobody is
         * served. For a node whose agent gets its certificate from the control plane (the
         * {@code datanode} command's default, {@code --tls on}). Default false: TLS is offered
         * once the node has a certificate, not required.
         */
        public Builder tlsRequired(boolean required) {
            this.tlsRequired = required;
            return this;
        }

        /**
         * Whether the node's own executor's scheduler anticipates: waits up to a millisecond for a
         * volume (or tenant) with requests on the way whose queue ran dry, rather than serve one
         * further ahead, so that weights hold when the backlog waits in the clients, the sockets
         * or the CPU run queue instead of the scheduler (no capacity setting; see "Anticipation"
         * in the {@code io.weir.scheduler} package documentation). Default true; false makes the
         * scheduler purely work-conserving. Ignored with {@link #executor}.
         */
        public Builder anticipation(boolean on) {
            this.anticipation = on;
            return this;
        }

        /**
         * Longest a worker running a batch holds a reply for the replies after it
         * ({@link ReplyBatch}); default {@value ReplyBatch#DEFAULT_HOLD_NANOS} ns. Tests set a long
         * one so that a batch's replies go out together however slowly its requests run. Ignored
         * with {@link #executor}.
         */
        Builder replyHold(Duration hold) {
            this.replyHold = hold;
            return this;
        }

        /**
         * Bytes of direct buffers that requests may hold across the node; a client whose next
         * write payload or read reply does not fit is not read from until buffers are released (one request is
         * always let through when none is held). Default: {@value BufferPool#DEFAULT_BUDGET}.
         */
        public Builder bufferBudget(long bytes) {
            if (bytes < 1) {
                throw new IllegalArgumentException("bufferBudget must be positive");
            }
            this.bufferBudget = bytes;
            return this;
        }

        /**
         * Where the node listens for the primaries of the replicated volumes it holds a copy of
         * (port 0: any free port). Default none: a config with a replicated volume is then refused.
         */
        public Builder replicationListen(InetSocketAddress address) {
            this.replicationListen = address;
            return this;
        }

        /**
         * The node is run from a config file with no control plane (the config-file mode): every
         * config applied is the truth, so a replicated volume's primary takes each as echoing its
         * in-sync set, and a restart asks only the copies it names. Default false.
         */
        public Builder configFileOnly(boolean on) {
            this.configFileOnly = on;
            return this;
        }

        /**
         * Tests: bytes of its primaries' write payloads the node holds as a copy, read and not yet
         * applied, before its connections stop reading ({@link ReceiveBudget}). Default
         * {@link ReceiveBudget#DEFAULT_BYTES}.
         */
        Builder replicationReceiveBudget(long bytes) {
            this.replicationReceiveBudget = bytes;
            return this;
        }

        /** Tests: the buffer pool to use instead of a new one (which {@link #bufferBudget} sizes). */
        Builder bufferPool(BufferPool pool) {
            this.pool = pool;
            return this;
        }

        /** Tests: a store slower than the CPU, {@code serviceTime} added to each data transfer. */
        Builder serviceTime(VolumeStore.ServiceTime serviceTime) {
            this.serviceTime = serviceTime;
            return this;
        }

        /** Starts the node: binds the listener and starts the threads. No exports until a config is applied. */
        public DataNode build() throws IOException {
            DataDirLock lock = DataDirLock.acquire(Objects.requireNonNull(dataDir, "dataDir"));
            try {
                return new DataNode(this, lock);
            } catch (IOException | RuntimeException | Error e) {
                lock.close();
                throw e;
            }
        }
    }
}
