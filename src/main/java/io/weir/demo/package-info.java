/**
 * {@code weir demo}: a whole cluster in one command, to look at and to point fio at.
 *
 * <p>{@link io.weir.demo.DemoApplication} runs the control plane (embedded PostgreSQL) in this
 * JVM under the {@code demo} profile; {@code DemoCluster} then seeds it through the public REST
 * API with the bootstrap admin token and starts two data nodes as child processes running
 * {@code weir datanode}, the same command a deployed node runs, with a node token each; they
 * require NBD over TLS, as every managed node does by default. It writes a client certificate of
 * each tenant to {@code <dir>/pki/<tenant>}, in the layout libnbd reads ({@code ca-cert.pem},
 * {@code client-cert.pem}, {@code client-key.pem}), waits until both nodes have their own certificates, prints
 * the {@code nbds://} URLs, the certificates and the dashboard URL (with a read-only viewer token
 * in the URL fragment), and stops the nodes, then the control plane, then removes its directory
 * on Ctrl-C.
 *
 * <p>Boundaries: the demo uses the control plane only through {@code ControlPlaneApplication}
 * and HTTP, and the data node only as a process; it depends on no other class of theirs.
 */
package io.weir.demo;
