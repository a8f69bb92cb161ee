/**
 * What tests and benchmarks share to start other processes: {@link io.erda.testsupport.ChildProcess}, the one launcher
 * of a server, a cluster member or any executable (its log, its ready line, SIGTERM / SIGKILL / SIGSTOP / SIGCONT).
 *
 * <p>Depends on nothing of Erda, so that every module can use it: in test scope, or in compile scope where main code
 * launches children (erda-bench's benchmarks, erda-cluster-harness).
 */
package io.erda.testsupport;
