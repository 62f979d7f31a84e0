package io.weir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** {@link HealthProbe}'s package-private checks, for tests of other packages that run a real server. */
public final class HealthProbeAccess {

    private HealthProbeAccess() {
    }

    public static String target(List<String> commandLine, Map<String, String> env) {
        return HealthProbe.target(commandLine, env);
    }

    public static String check(String target, Path caFile) {
        return HealthProbe.check(target, caFile);
    }
}
