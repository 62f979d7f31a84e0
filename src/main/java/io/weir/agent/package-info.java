/**
 * The agent a data node embeds: it keeps the node's scheduler on the control plane's desired
 * config, over the agent channel of {@code io.weir.protocol}.
 *
 * <p>Depends on the scheduler, the protocol, the JDK (its {@code HttpClient} WebSocket) and
 * Jackson; never on Spring. {@link io.weir.agent.ConfigTranslator} is the one translation from the
 * wire's {@code DesiredConfig} to the scheduler's {@code SchedulerConfig}.
 */
package io.weir.agent;
