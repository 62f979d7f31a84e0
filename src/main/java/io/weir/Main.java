package io.weir;

import io.weir.agent.AgentCommand;
import io.weir.controlplane.ControlPlaneApplication;
import io.weir.controlplane.pki.PkiCommand;
import io.weir.datanode.DataNodeCommand;
import io.weir.demo.DemoApplication;
import java.io.PrintStream;
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

    /**
     * Prints the roles if {@code args} ask for help ({@code --help}, {@code -h} or {@code help} first,
     * or {@code --help}/{@code -h} among the control plane's arguments, which Spring would take for a
     * property and start); each other role answers its own {@code --help}.
     *
     * @return whether it printed them
     */
    static boolean help(String[] args, PrintStream out) {
        boolean controlPlane = args.length == 0 || args[0].startsWith("-") || args[0].equals("controlplane");
        boolean asked = args.length > 0 && args[0].equals("help")
                || controlPlane && Arrays.stream(args).anyMatch(a -> a.equals("--help") || a.equals("-h"));
        if (asked) {
            out.println("Usage: java -jar weir.jar [ROLE] [options]");
            out.println();
            out.println("Roles:");
            out.println("  controlplane [--property=value ...]  the control plane (the default): REST API, dashboard, agents'");
            out.println("                                       connections; every setting a Spring property (README, Configuration)");
            out.println("  datanode [options]                   an NBD data node with its agent (datanode --help)");
            out.println("  agent [options]                      a standalone agent (agent --help)");
            out.println("  demo [options]                       a control plane and two data nodes, seeded (demo --help)");
            out.println("  pki init --dir DIR --server-names N  a cluster CA and the control plane's HTTPS certificate");
        }
        return asked;
    }

    public static void main(String[] args) {
        if (help(args, System.out)) {
            return;
        }
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
