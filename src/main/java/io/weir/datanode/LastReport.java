package io.weir.datanode;

import io.weir.protocol.ReplicationConfig;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;

/**
 * What a restarted primary knows of the in-sync sets it reported (rules 6 and 7 of
 * {@link ReplicatedVolume}), read from its {@link SyncState}: the set it last reported
 * ({@code null}: unknown, so the config's) at {@code sequence}, the copies to ask whether they
 * were promoted, and those the control plane may hold in sync (writes wait for an echo while one
 * of them is out of sync here).
 */
record LastReport(Set<UUID> inSync, long sequence, Set<UUID> ask, Set<UUID> maybeInSync) {

    private static final System.Logger LOG = System.getLogger(LastReport.class.getName());

    /** Whether the copy {@code cc} was in sync in the set last reported (the config's, if that is unknown). */
    boolean inSync(ReplicationConfig.Copy cc) {
        return inSync == null ? cc.inSync() : inSync.contains(cc.nodeId());
    }

    /**
     * At a restart of volume {@code volume} as the primary of {@code rc}, which names the copies
     * {@code named} and has {@code configInSync} in sync: its {@link SyncState} ({@code file}),
     * kept at every change of the in-sync set and every new epoch, is at least as new as the
     * config it kept, and names every copy the control plane may hold in sync (one from the
     * version before, which kept no such set: any copy). Unreadable, of another epoch or older
     * than the config (the config was kept before the state was), nothing is known
     * ({@link #unknown}). Missing (files from a version that kept none, or made by hand for the
     * config-file mode, which has no control plane to echo anything), every copy is asked and the
     * config's set taken as the control plane's.
     */
    static LastReport read(UUID volume, Path file, ReplicationConfig rc, Set<UUID> named, Set<UUID> configInSync) {
        SyncState state;
        try {
            state = SyncState.read(file);
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "volume {0}: its kept in-sync set is unreadable ({1})", volume, e.toString());
            return unknown(volume, rc, named);
        }
        if (state == null) {
            LOG.log(System.Logger.Level.INFO, "volume {0}: no in-sync set kept; asking every copy before serving", volume);
            return new LastReport(null, rc.syncSequence(), named, configInSync);
        }
        if (state.epoch() != rc.epoch() || state.sequence() < rc.syncSequence()) {
            return unknown(volume, rc, named);
        }
        // the version before kept no maybeInSync: any copy may be held in sync
        Set<UUID> may = new HashSet<>(state.maybeInSync() == null ? named : state.maybeInSync());
        may.addAll(configInSync);
        return new LastReport(state.inSync(), state.sequence(), may, may);
    }

    /**
     * The kept set is unreadable or disagrees with the config: every copy is asked, any may be
     * held in sync, and none is in sync here until copied whole (a copy the config has in sync may
     * have left the set since, lacking acknowledged writes; reported in sync above the control
     * plane's sequence, it could be promoted).
     */
    private static LastReport unknown(UUID volume, ReplicationConfig rc, Set<UUID> named) {
        LOG.log(System.Logger.Level.WARNING, "volume {0}: no usable in-sync set kept at epoch {1}; asking every copy before"
                + " serving, copying each whole, and acknowledging writes once the control plane has echoed this node''s"
                + " report", volume, rc.epoch());
        return new LastReport(Set.of(), rc.syncSequence() + 1, named, named);
    }
}
