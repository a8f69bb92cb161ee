/**
 * The few libc calls the JDK does not offer: {@link MemoryAdvice} ({@code madvise(2)}: transparent huge pages for a
 * mapping, populating its page tables ahead of use) and {@link Scheduling} ({@code sched_setscheduler(2)}: a thread
 * into the real-time class; {@code sched_setaffinity(2)}: a thread pinned to a CPU; both for scale-bench's hiccup
 * probe; {@code setpriority(2)}: a thread's nice value, for the server's lease checker) and {@link PageMap} (the
 * {@code PAGEMAP_SCAN} ioctl: which pages of a range are present, and which huge pages map, for the server's huge-page
 * check) and {@link DeviceDax} ({@code open(2)} and {@code mmap(2)} of a device-DAX character device, which
 * {@code FileChannel} cannot map).
 * Errors are an {@link java.io.UncheckedIOException} naming the call, its arguments and the errno captured right after
 * it ({@code io.erda.ffm.verbs.Errno}), made in one place ({@code LibcCall}).
 *
 * <p>Depends on the JDK and {@code io.erda.ffm.verbs.Errno} only.
 */
package io.erda.ffm.libc;
