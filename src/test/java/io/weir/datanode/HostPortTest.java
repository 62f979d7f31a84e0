package io.weir.datanode;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetSocketAddress;
import org.junit.jupiter.api.Test;

/** {@link HostPort}: the one parser of the node's {@code host:port} addresses. */
class HostPortTest {

    @Test
    void theHostIsBeforeTheLastColonAndAnIpv6HostMayBeInBrackets() {
        assertThat(HostPort.parse("127.0.0.1:10809")).isEqualTo(new InetSocketAddress("127.0.0.1", 10809));
        assertThat(HostPort.parse("[::1]:10810")).isEqualTo(new InetSocketAddress("::1", 10810));
        assertThat(HostPort.parse("0.0.0.0:0")).isEqualTo(new InetSocketAddress("0.0.0.0", 0));
    }

    @Test
    void anAddressThatIsNotHostColonPortIsRefusedWithItsText() {
        assertThatThrownBy(() -> HostPort.parse("localhost")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("localhost");
        assertThatThrownBy(() -> HostPort.parse("localhost:http")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("localhost:http");
        assertThatThrownBy(() -> HostPort.parse("localhost:65536")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("localhost:65536");
    }

    @Test
    void theListenOptionsNameThemselvesInTheirError() {
        assertThatThrownBy(() -> DataNodeCommand.address("localhost")).hasMessage("--listen must be host:port: localhost");
        assertThatThrownBy(() -> DataNodeCommand.replicationListen("host:port", null))
                .hasMessage("--replication-listen must be host:port: host:port");
    }
}
