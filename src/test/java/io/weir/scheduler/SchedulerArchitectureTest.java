package io.weir.scheduler;

import static com.tngtech.archunit.core.domain.JavaClass.Predicates.belongToAnyOf;
import static com.tngtech.archunit.core.domain.JavaClass.Predicates.resideInAnyPackage;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;
import io.weir.protocol.QosSettings;

/**
 * The scheduler is embeddable in any data node: it depends on nothing but the JDK, HdrHistogram
 * and the JDK-only QoS contract {@link QosSettings}, and the core never depends on its simulator.
 */
@AnalyzeClasses(packages = "io.weir.scheduler", importOptions = ImportOption.DoNotIncludeTests.class)
class SchedulerArchitectureTest {

    @ArchTest
    static final ArchRule schedulerDependsOnlyOnTheJdkAndHdrHistogram = classes()
            .that().resideInAPackage("io.weir.scheduler..")
            .should().onlyDependOnClassesThat(resideInAnyPackage("java..", "org.HdrHistogram..", "io.weir.scheduler..")
                    // The QoS contract shared with the control plane; JDK-only itself (ArchitectureTest).
                    .or(belongToAnyOf(QosSettings.class)));

    @ArchTest
    static final ArchRule coreDoesNotDependOnTheSimulator = noClasses()
            .that().resideInAPackage("io.weir.scheduler")
            .should().dependOnClassesThat().resideInAPackage("io.weir.scheduler.sim..");
}
