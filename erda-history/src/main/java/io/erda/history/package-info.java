/**
 * Histories of operations on registers, one per key, and a linearizability checker for them, in the tradition of
 * Jepsen: clients record every operation's invocation, completion and result ({@link io.erda.history.HistoryRecorder},
 * one line each in a {@link io.erda.history.HistoryFile}), faults happen, and
 * {@link io.erda.history.LinearizabilityChecker} judges the whole {@link io.erda.history.History}: Wing &amp; Gong's
 * search with Lowe's memoisation, per key, naming the operation that cannot be linearized and the
 * {@link io.erda.history.Anomaly anomalies} (stale, lost, unwritten) behind it.
 *
 * <p>Depends on the JDK only.
 */
package io.erda.history;
