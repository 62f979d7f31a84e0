package io.weir.support;

import java.time.Duration;

/**
 * How long a test awaits a condition that involves real parts (a data node, fio, PostgreSQL, an
 * agent's reconnect) before it fails. One value for every test: a longer wait only makes a
 * failure slower to report, never a pass less honest, and these machines are shared and loaded.
 */
public final class Patience {

    /** The longest a test awaits a condition: 90 s. */
    public static final Duration PATIENCE = Duration.ofSeconds(90);

    private Patience() {
    }
}
