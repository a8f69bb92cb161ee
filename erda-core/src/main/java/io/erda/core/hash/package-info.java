/**
 * Key hashing that clients and server must agree on bit for bit: {@link KeyHash} (XXH3-64 of the key bytes, and from it
 * the home bucket from the low bits, the fingerprint from the high 32 bits and the head from a multiplicative mix) and
 * {@link Key} (a key with its hash computed once, equal by content; {@code of} wraps the caller's bytes, {@code copyOf}
 * takes a heap copy for keys that outlive their buffer).
 *
 * <p>Rules: derive buckets, fingerprints and heads only through {@link KeyHash}. Changing a derivation moves stored
 * keys to other buckets and heads, so existing stores and clients of another build would no longer find them.
 * {@code Key.of} checks the key length (1..65535) before hashing.
 *
 * <p>Depends on hash4j, {@code io.erda.core.layout} (the key length limit of {@code ObjectLayout}) and the JDK only.
 */
package io.erda.core.hash;
