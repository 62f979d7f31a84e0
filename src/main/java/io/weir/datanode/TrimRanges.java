package io.weir.datanode;

import java.util.Iterator;
import java.util.Map;
import java.util.TreeMap;

/**
 * A volume's pending trims: disjoint, coalesced byte ranges {@code [start, end)} that a client
 * trimmed and the gc task has not yet deallocated ({@link VolumeStore#trim}, {@link VolumeStore#gcStep}).
 * Adding a range merges it with every range it overlaps or touches; cancelling a range (a write
 * into it) removes exactly that part, splitting a range around it; the gc task takes the ranges
 * from the lowest, a bounded piece at a time. The byte count is kept as ranges come and go, and
 * readable without the lock ({@link #pendingBytes}). Thread-safe; pure (no IO), so that it can be
 * tested apart from the files.
 */
final class TrimRanges {

    /** A range {@code [start, end)}. */
    record Range(long start, long end) {
        long length() {
            return end - start;
        }
    }

    /** start -> end (exclusive); guarded by {@code this}. */
    private final TreeMap<Long, Long> ranges = new TreeMap<>();
    /** Bytes in {@link #ranges} (guarded by {@code this}). */
    private long total;
    /** {@link #total} as of the end of the last change, for readers without the lock. */
    private volatile long pendingBytes;

    /** Adds {@code [start, end)}, merged with the ranges it overlaps or touches; nothing if empty. */
    synchronized void add(long start, long end) {
        if (end <= start) {
            return;
        }
        Map.Entry<Long, Long> before = ranges.floorEntry(start);
        if (before != null && before.getValue() >= start) {
            start = before.getKey();
            end = Math.max(end, before.getValue());
        }
        Iterator<Map.Entry<Long, Long>> it = ranges.tailMap(start, true).entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<Long, Long> e = it.next();
            if (e.getKey() > end) {
                break;
            }
            end = Math.max(end, e.getValue());
            total -= e.getValue() - e.getKey();
            it.remove();
        }
        put(start, end);
        pendingBytes = total;
    }

    /** Removes {@code [from, to)}: what lies inside it of any range; nothing if empty. */
    synchronized void cancel(long from, long to) {
        if (to <= from) {
            return; // an empty range would split the range around it in two that touch
        }
        Map.Entry<Long, Long> before = ranges.lowerEntry(from);
        if (before != null && before.getValue() > from) {
            put(before.getKey(), from);
            if (before.getValue() > to) {
                put(to, before.getValue());
            }
        }
        Iterator<Map.Entry<Long, Long>> it = ranges.tailMap(from, true).entrySet().iterator();
        while (it.hasNext()) {
            Map.Entry<Long, Long> e = it.next();
            if (e.getKey() >= to) {
                break;
            }
            long endOfRange = e.getValue();
            total -= endOfRange - e.getKey();
            it.remove();
            if (endOfRange > to) {
                put(to, endOfRange);
                break;
            }
        }
        pendingBytes = total;
    }

    /**
     * Removes and answers the first {@code maxBytes} of the lowest range (what is left of it stays),
     * or null when none is pending.
     */
    synchronized Range takeFirst(long maxBytes) {
        Map.Entry<Long, Long> e = ranges.firstEntry();
        if (e == null) {
            return null;
        }
        long start = e.getKey();
        long end = Math.min(e.getValue(), start + maxBytes);
        ranges.remove(start);
        total -= e.getValue() - start;
        if (end < e.getValue()) {
            put(end, e.getValue());
        }
        pendingBytes = total;
        return new Range(start, end);
    }

    /** Bytes pending, as of the last change. */
    long pendingBytes() {
        return pendingBytes;
    }

    /** The ranges, lowest first (tests). */
    synchronized java.util.List<Range> ranges() {
        return ranges.entrySet().stream().map(e -> new Range(e.getKey(), e.getValue())).toList();
    }

    /** Sets the range starting at {@code start}, replacing the one there, keeping the count. Holds this. */
    private void put(long start, long end) {
        Long old = ranges.put(start, end);
        total += end - start - (old == null ? 0 : old - start);
    }
}
