package io.weir;

import io.weir.agent.AgentCommand;
import io.weir.controlplane.ControlPlaneApplication;
import io.weir.datanode.DataNodeCommand;
import io.weir.demo.DemoApplication;
import java.util.Arrays;

/**
 * The one executable, several roles.
 *
 * <pre>
 * java -jar weir.jar [controlplane] [spring options]   the control plane (default)
 * java -jar weir.jar agent [options]                  a standalone agent (--help lists the options)
 * java -jar weir.jar datanode [options]                an NBD data node (--help lists the options)
 * java -jar weir.jar demo [options]                    control plane + two data nodes, seeded (--help)
 * </pre>
 */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        String role = args.length > 0 && !args[0].startsWith("-") ? args[0] : "controlplane";
        String[] rest = args.length > 0 && !args[0].startsWith("-") ? Arrays.copyOfRange(args, 1, args.length) : args;
        switch (role) {
            case "controlplane" -> ControlPlaneApplication.main(rest);
            case "agent" -> AgentCommand.main(rest);
            case "datanode" -> DataNodeCommand.main(rest);
            case "demo" -> DemoApplication.main(rest);
            default -> {
                System.err.println("weir: unknown role '" + role + "'. Roles: controlplane, agent, datanode, demo");
                System.exit(2);
            }
        }
    }
}
