/**
 * Wire messages between the control plane and the data-node agents, and their JSON form.
 *
 * <p>Depends on the JDK and Jackson only, so that a data node can embed the agent without Spring.
 * Records map to JSON field for field (camelCase); enums are written in lower case as they are
 * named.
 */
package io.weir.protocol;
