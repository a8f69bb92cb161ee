package io.erda.core.pm;

/** A PM directory or file that another user could write, refused by {@link PmFileModes} (the message names path, mode and owner). */
public final class PmPermissionException extends RuntimeException {
    public PmPermissionException(String message) {
        super(message);
    }
}
