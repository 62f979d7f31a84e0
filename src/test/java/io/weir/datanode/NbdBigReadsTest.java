package io.weir.datanode;

import io.weir.support.TestConfigs;
import static io.weir.support.Bytes.MiB;
import static io.weir.datanode.NbdServerTest.bytes;
import static io.weir.support.TestConfigs.config;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 23, item 4: clients of the largest reads take the node's direct memory only within its
 * buffer budget, and wait for it rather than get ENOMEM, while a client of small reads on another
 * tenant's volume goes on being served. A real data node in its own JVM with 256 MiB of heap and
 * of direct memory (so its default budget is 192 MiB), its defaults otherwise; real sockets.
 */
class NbdBigReadsTest {
    static final int BIG = (int) (32 * MiB); // the advertised maximum block size
    static final int CLIENTS = 16;
    static final int PIPELINED = 4;

    @TempDir
    Path dir;

    /** Sends one simple request header. */
    static void request(NbdTestClient c, int type, long cookie, long offset, int length) throws IOException {
        c.out.writeInt(Nbd.REQUEST_MAGIC);
        c.out.writeShort(0);
        c.out.writeShort(type);
        c.out.writeLong(cookie);
        c.out.writeLong(offset);
        c.out.writeInt(length);
    }

    /** Reads one simple reply, skipping {@code dataBytes} of data if it succeeded; returns its error. */
    static int reply(NbdTestClient c, int dataBytes) throws IOException {
        if (c.in.readInt() != Nbd.SIMPLE_REPLY_MAGIC) {
            throw new IOException("bad reply magic");
        }
        int error = c.in.readInt();
        c.in.readLong();
        if (error == 0) {
            c.in.skipNBytes(dataBytes);
        }
        return error;
    }

    @Test
    void sixteenClientsOfFourPipelinedMaximumReadsWaitForTheBudgetAndASmallReaderBesideThemIsServed() throws Exception {
        Path config = ForkedDataNode.writeConfig(dir.resolve("config.json"), config().tenant("acme").tenant("other")
                .volume("acme", "big", 2L * BIG).volume("other", "small", 16 * MiB).build());
        ExecutorService threads = Executors.newFixedThreadPool(CLIENTS);
        try (ForkedDataNode node = ForkedDataNode.start(List.of("-Xmx256m", "-XX:MaxDirectMemorySize=256m"), config,
                dir.resolve("data")); NbdTestClient small = new NbdTestClient(node.address).open("other/small")) {
            small.write(0, bytes(4096, 9));
            List<NbdTestClient> readers = new ArrayList<>();
            for (int i = 0; i < CLIENTS; i++) {
                readers.add(new NbdTestClient(node.address).openSimple("acme/big"));
            }
            List<Future<List<Integer>>> results = new ArrayList<>();
            for (NbdTestClient r : readers) {
                results.add(threads.submit(() -> {
                    for (int i = 0; i < PIPELINED; i++) {
                        request(r, Nbd.CMD_READ, i, (long) (i % 2) * BIG, BIG);
                    }
                    r.out.flush();
                    List<Integer> errors = new ArrayList<>();
                    for (int i = 0; i < PIPELINED; i++) {
                        errors.add(reply(r, BIG));
                    }
                    return errors;
                }));
            }
            // QD1 4 KiB reads on the other tenant's volume while the big reads are answered
            int smallReads = 0;
            long slowest = 0;
            long t0 = System.nanoTime();
            while (!results.stream().allMatch(Future::isDone)) {
                long s = System.nanoTime();
                assertThat(small.read(0, 4096)).isEqualTo(bytes(4096, 9));
                slowest = Math.max(slowest, System.nanoTime() - s);
                smallReads++;
            }
            double seconds = (System.nanoTime() - t0) / 1e9;
            List<Integer> errors = new ArrayList<>();
            for (Future<List<Integer>> f : results) {
                errors.addAll(f.get(120, TimeUnit.SECONDS));
            }
            assertThat(errors).as("every maximum read answered without error (ENOMEM is %d)", Nbd.ENOMEM)
                    .hasSize(CLIENTS * PIPELINED).containsOnly(0);

            // then a maximum write from each of the 16 at once: answered, no connection closed
            AtomicBoolean closed = new AtomicBoolean();
            List<Future<Integer>> writes = new ArrayList<>();
            byte[] payload = bytes(BIG, 4);
            for (NbdTestClient r : readers) {
                writes.add(threads.submit(() -> {
                    try {
                        request(r, Nbd.CMD_WRITE, 100, 0, BIG);
                        r.out.write(payload);
                        r.out.flush();
                        return reply(r, 0);
                    } catch (IOException e) {
                        closed.set(true);
                        return -1;
                    }
                }));
            }
            for (Future<Integer> w : writes) {
                assertThat(w.get(120, TimeUnit.SECONDS)).as("a maximum write after the reads").isZero();
            }
            assertThat(closed).as("a connection closed by the node").isFalse();
            assertThat(small.read(0, 4096)).isEqualTo(bytes(4096, 9));
            assertThat(slowest).as("the slowest of %d QD1 reads beside the big ones (%.1f IOPS)", smallReads,
                    smallReads / seconds).isLessThan(TimeUnit.SECONDS.toNanos(2));
            assertThat(node.output.toString()).as("the node's log").doesNotContain("OutOfMemoryError");
            for (NbdTestClient r : readers) {
                r.close();
            }
        } finally {
            threads.shutdownNow();
        }
    }
}
