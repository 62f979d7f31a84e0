package io.weir.scheduler;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

import com.tngtech.archunit.core.importer.ImportOption;
import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/**
 * The scheduler is embeddable in any data node: it depends on nothing but the JDK and
 * HdrHistogram, and the core never depends on its simulator.
 */
@AnalyzeClasses(packages = "io.weir.scheduler", importOptions = ImportOption.DoNotIncludeTests.class)
class SchedulerArchitectureTest {

    @ArchTest
    static final ArchRule schedulerDependsOnlyOnTheJdkAndHdrHistogram = classes()
            .that().resideInAPackage("io.weir.scheduler..")
            .should().onlyDependOnClassesThat()
            .resideInAnyPackage("java..", "org.HdrHistogram..", "io.weir.scheduler..");

    @ArchTest
    static final ArchRule coreDoesNotDependOnTheSimulator = noClasses()
            .that().resideInAPackage("io.weir.scheduler")
            .should().dependOnClassesThat().resideInAPackage("io.weir.scheduler.sim..");
}
