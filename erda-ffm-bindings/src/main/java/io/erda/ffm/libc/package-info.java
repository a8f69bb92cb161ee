/**
 * The few libc calls on memory the JDK does not offer: {@link MemoryAdvice} ({@code madvise(2)}: transparent huge
 * pages for a mapping, populating its page tables ahead of use). Errors are an {@link java.io.UncheckedIOException}
 * naming the call, the range and the errno captured right after it ({@code io.erda.ffm.verbs.Errno}).
 *
 * <p>Depends on the JDK and {@code io.erda.ffm.verbs.Errno} only.
 */
package io.erda.ffm.libc;
