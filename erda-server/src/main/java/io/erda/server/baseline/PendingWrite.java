package io.erda.server.baseline;

/**
 * What a baseline's PM log (redo log or ring) knows of a key before the table does: {@code pending} false means
 * nothing unapplied, ask the table; otherwise {@code value} is the newest unapplied value, null for a delete.
 */
record PendingWrite(boolean pending, byte[] value) {
    static final PendingWrite NONE = new PendingWrite(false, null);
}
