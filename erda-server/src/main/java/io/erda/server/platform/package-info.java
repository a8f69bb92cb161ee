/**
 * What the server needs of the machine beneath the store: {@link io.erda.server.platform.HugePages} (table and log
 * regions on 2 MiB transparent huge pages, checked, with {@code Mounts} telling which tmpfs a directory is on;
 * {@link io.erda.server.platform.HugePagesUnavailableException} when the system does not give them) and
 * {@link io.erda.server.platform.PmEmulation} (power-failure emulation: which writes are durable when, per
 * configuration of the remote-persistence taxonomy; the {@code power-fail} command collapses).
 *
 * <p>May depend on erda-core ({@code io.erda.core.pm}), erda-protocol ({@code PersistenceMethod}, {@code
 * PmConfiguration}), the fabric SPI ({@code io.erda.fabric}: registration options, durable mirrors) and
 * erda-ffm-bindings' {@code io.erda.ffm.libc}
 * ({@code madvise}, the page map); never on another package of the server: the store, the request path and the
 * command line use it, not the other way round.
 */
package io.erda.server.platform;
