package io.erda.fabric.shm;

import io.erda.fabric.FabricException;

/**
 * A peer's ring file or ring record breaks the layout of {@link RingFile} and {@link RingRecord} ([bad-input]):
 * the message names the value and the limit. The endpoint that reads it fails; nothing of the record is used.
 */
final class RingViolation extends FabricException {
    RingViolation(String message) {
        super(message);
    }
}
