/**
 * The YCSB binding: {@link ErdaYcsbDb} ({@code -db io.erda.bench.ycsb.ErdaYcsbDb}; one connection per YCSB thread; no
 * scan) and {@link RecordEncoding} (a record's fields as one stored value, varint-framed).
 *
 * <p>Rules: the binding reaches a store only through {@code StoreBackends} and {@code StoreClient}, so it drives
 * whichever backend on the class path serves {@code erda.protocol}. YCSB loads it by class name and
 * {@code io.erda.bench.compare} reads its {@code CONNECTED} and {@code CLOSING} lines on stderr: renaming either breaks
 * the comparison.
 *
 * <p>Depends on {@code io.erda.bench.backend}, YCSB core and the JDK; not on erda-client directly.
 */
package io.erda.bench.ycsb;
