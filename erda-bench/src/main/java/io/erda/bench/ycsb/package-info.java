/**
 * The YCSB binding: {@link ErdaYcsbDb} ({@code -db io.erda.bench.ycsb.ErdaYcsbDb}; one connection per YCSB thread; no
 * scan) and {@link RecordEncoding} (a record's fields as one stored value, varint-framed); and
 * {@link WarmedYcsbClient}, YCSB's client main behind a warm-up that none of its measurements see.
 *
 * <p>Rules: the binding reaches a store only through {@code StoreBackends} and {@code StoreClient}, so it drives
 * whichever backend on the class path serves {@code erda.protocol}. YCSB loads it by class name and
 * {@code io.erda.bench.compare} reads its {@code CONNECTED} and {@code CLOSING} lines and {@code WarmedYcsbClient}'s
 * {@code WARMED_UP} line on stderr: renaming any breaks the comparison.
 *
 * <p>Depends on {@code io.erda.bench.backend}, YCSB core and the JDK; not on erda-client directly.
 */
package io.erda.bench.ycsb;
