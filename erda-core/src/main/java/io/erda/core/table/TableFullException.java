package io.erda.core.table;

/** No free bucket could be brought into a key's neighbourhood; nothing was overwritten. */
public final class TableFullException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public TableFullException(String message) {
        super(message);
    }
}
