package io.weir;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideOutsideOfPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import io.weir.controlplane.ControlPlaneApplication;
import io.weir.protocol.QosSettings;

/**
 * The package boundaries of docs/architecture.md: what each top-level package may
 * depend on, and no cycles among the control plane's feature packages.
 * Only the control plane sees Spring, so the agent (scheduler, protocol, agent) embeds in a data
 * node without it.
 */
@AnalyzeClasses(packages = "io.weir", importOptions = ImportOption.DoNotIncludeTests.class)
class ArchitectureTest {

    private static final String[] JDK = {"java..", "javax.."};

    @ArchTest
    static final ArchRule protocolDependsOnJdkAndJacksonOnly = classes()
            .that().resideInAPackage("io.weir.protocol..")
            .should().onlyDependOnClassesThat().resideInAnyPackage(
                    concat(JDK, "io.weir.protocol..", "tools.jackson..", "com.fasterxml.jackson.annotation..",
                            // annotation only (nullness, read by the OpenAPI description); nothing at run time
                            "org.jspecify.annotations.."))
            .allowEmptyShould(true);

    /**
     * The QoS contract's one owner is JDK-only, so that the scheduler can validate with it (and
     * stays free of Jackson).
     */
    @ArchTest
    static final ArchRule qosSettingsDependOnTheJdkOnly = classes()
            .that(belongToAnyOf(QosSettings.class))
            .should().onlyDependOnClassesThat(resideInAnyPackage(JDK).or(belongToAnyOf(QosSettings.class)));

    /** The scheduler sees the JDK, HdrHistogram and, of the protocol, only {@link QosSettings}. */
    @ArchTest
    static final ArchRule schedulerSeesOnlyTheQosContractOfTheProtocol = classes()
            .that().resideInAPackage("io.weir.scheduler..")
            .should().onlyDependOnClassesThat(resideInAnyPackage(concat(JDK, "io.weir.scheduler..", "org.HdrHistogram.."))
                    .or(belongToAnyOf(QosSettings.class)));

    /**
     * The agent adds BouncyCastle (the node's key and its PKCS#10 request, PEM) to the protocol's
     * JDK and Jackson.
     */
    @ArchTest
    static final ArchRule agentDependsOnSchedulerProtocolJdkJacksonAndBouncyCastleOnly = classes()
            .that().resideInAPackage("io.weir.agent..")
            .should().onlyDependOnClassesThat().resideInAnyPackage(concat(JDK, "io.weir.agent..",
                    "io.weir.scheduler..", "io.weir.protocol..", "tools.jackson..",
                    "com.fasterxml.jackson.annotation..", "org.HdrHistogram..", "org.bouncycastle.."))
            .allowEmptyShould(true);

    @ArchTest
    static final ArchRule datanodeDoesNotSeeTheControlPlane = noClasses()
            .that().resideInAPackage("io.weir.datanode..")
            .should().dependOnClassesThat().resideInAnyPackage("io.weir.controlplane..", "org.springframework..")
            .allowEmptyShould(true);

    /**
     * The data node adds JNA (fallocate, lseek for holes) and tls-channel (an SSLEngine as a
     * non-blocking channel, for NBD over TLS) to what the agent may use, and the JDK's
     * HotSpot management API (the direct memory limit its buffer budget derives from); nobody else
     * uses JNA.
     */
    @ArchTest
    static final ArchRule datanodeDependsOnAgentSchedulerProtocolJdkJacksonAndJnaOnly = classes()
            .that().resideInAPackage("io.weir.datanode..")
            .should().onlyDependOnClassesThat().resideInAnyPackage(concat(JDK, "io.weir.datanode..", "io.weir.agent..",
                    "io.weir.scheduler..", "io.weir.protocol..", "tools.jackson..",
                    "com.fasterxml.jackson.annotation..", "org.HdrHistogram..", "com.sun.jna..", "com.sun.management..",
                    "tlschannel.."))
            .allowEmptyShould(true);

    @ArchTest
    static final ArchRule onlyTheDataNodeUsesJna = noClasses()
            .that().resideOutsideOfPackage("io.weir.datanode..")
            .should().dependOnClassesThat().resideInAPackage("com.sun.jna..");

    @ArchTest
    static final ArchRule onlyTheControlPlaneSeesSpring = noClasses()
            .that().resideInAnyPackage("io.weir.scheduler..", "io.weir.protocol..", "io.weir.agent..",
                    "io.weir.datanode..")
            .should().dependOnClassesThat().resideInAnyPackage("org.springframework..", "jakarta.persistence..")
            .allowEmptyShould(true);

    @ArchTest
    static final ArchRule controlPlaneReachesDataNodesOnlyThroughTheProtocol = noClasses()
            .that().resideInAPackage("io.weir.controlplane..")
            .should().dependOnClassesThat().resideInAnyPackage("io.weir.agent..", "io.weir.datanode..",
                    "io.weir.scheduler..")
            .allowEmptyShould(true);

    /**
     * The demo drives the control plane through its REST API and runs data nodes as processes: of
     * the rest of Weir it sees only the application class it starts.
     */
    @ArchTest
    static final ArchRule theDemoUsesTheProductFromOutside = classes()
            .that().resideInAPackage("io.weir.demo..")
            .should().onlyDependOnClassesThat(resideOutsideOfPackage("io.weir..")
                    .or(resideInAPackage("io.weir.demo.."))
                    .or(belongToAnyOf(ControlPlaneApplication.class)));

    /** The desired config reads the features through ports it owns (PlacedVolumes, TenantDirectory, ...). */
    @ArchTest
    static final ArchRule configSeesNoFeaturePackage = noClasses()
            .that().resideInAPackage("io.weir.controlplane.config..")
            .should().dependOnClassesThat().resideInAnyPackage("io.weir.controlplane.tenant..",
                    "io.weir.controlplane.volume..", "io.weir.controlplane.policy..", "io.weir.controlplane.node..",
                    "io.weir.controlplane.taskshare..");

    /**
     * The control plane's feature packages (tenant, volume, node, token, security, audit, ...) form
     * no cycle: where one needs another that depends on it, the one that needs it owns a small
     * interface (a port) and the other implements it, such as {@code security.BearerTokens} or
     * {@code node.NodeCredentials}.
     */
    @ArchTest
    static final ArchRule controlPlaneFeaturesFormNoCycles = slices()
            .matching("io.weir.controlplane.(*)..")
            .should().beFreeOfCycles();

    private static String[] concat(String[] head, String... tail) {
        String[] all = new String[head.length + tail.length];
        System.arraycopy(head, 0, all, 0, head.length);
        System.arraycopy(tail, 0, all, head.length, tail.length);
        return all;
    }
}
