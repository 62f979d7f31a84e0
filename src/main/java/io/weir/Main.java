package io.weir;

import io.weir.agent.AgentCommand;
import io.weir.controlplane.ControlPlaneApplication;
import io.weir.controlplane.pki.PkiCommand;
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
 * java -jar weir.jar pki init --dir DIR --server-names N  a cluster CA and the control plane's HTTPS certificate
 * </pre>
 * Every role logs in one format, Spring Boot's ({@link RoleLogging}).
 */
public final class Main {

    private Main() {
    }

    public static void main(String[] args) {
        String role = args.length > 0 && !args[0].startsWith("-") ? args[0] : "controlplane";
        String[] rest = args.length > 0 && !args[0].startsWith("-") ? Arrays.copyOfRange(args, 1, args.length) : args;
        switch (role) {
            case "controlplane" -> ControlPlaneApplication.main(rest);
            case "agent" -> {
                RoleLogging.start("agent");
                AgentCommand.main(rest);
            }
            case "datanode" -> {
                RoleLogging.start("datanode");
                DataNodeCommand.main(rest);
            }
            case "demo" -> DemoApplication.main(rest);
            case "pki" -> PkiCommand.main(rest);
            default -> {
                System.err.println("weir: unknown role '" + role + "'. Roles: controlplane, agent, datanode, demo, pki");
                System.exit(2);
            }
        }
    }
}
