/**
 * The agent embedded in each data node: it applies the control plane's config to the node's
 * scheduler and reports usage back.
 *
 * <p>Depends on {@code scheduler}, {@code protocol}, the JDK's HttpClient and Jackson only, so a
 * data node written in Java embeds it without Spring. {@link io.weir.agent.UsageReporter} makes
 * the numbered, acknowledged usage reports from the scheduler's statistics.
 */
package io.weir.agent;
