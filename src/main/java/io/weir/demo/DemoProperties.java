package io.weir.demo;

import java.nio.file.Path;
import java.time.Duration;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;

/**
 * Settings of {@code weir demo} ({@code weir.demo.*}).
 *
 * @param dir where the control plane's database and the data nodes' files go; removed at the end
 * @param bindAddress where the control plane and the data nodes listen: 127.0.0.1 (this machine
 *     only), or 0.0.0.0 in a container whose ports are published
 * @param nbdPort the first data node's NBD port; the second takes the next one. 0: each node
 *     picks a free port (the demo prints which)
 * @param nodeHeap the maximum heap of each data-node process ({@code -Xmx})
 * @param readyTimeout how long the data nodes may take to start and apply their first config
 */
@ConfigurationProperties("weir.demo")
record DemoProperties(
        Path dir,
        @DefaultValue("127.0.0.1") String bindAddress,
        @DefaultValue("10809") int nbdPort,
        @DefaultValue("384m") String nodeHeap,
        @DefaultValue("2m") Duration readyTimeout) {

    DemoProperties {
        if (nbdPort < 0 || nbdPort > 65534) {
            throw new IllegalArgumentException("weir.demo.nbd-port must be 0 (any free port) or 1-65534, not " + nbdPort);
        }
    }

    /** The address to connect to: the bind address, or 127.0.0.1 for a wildcard one. */
    String connectAddress() {
        return bindAddress.equals("0.0.0.0") || bindAddress.equals("::") ? "127.0.0.1" : bindAddress;
    }
}
