package io.erda.server.platform;

/** {@code --huge-pages} asked for huge pages the system does not give; the message names what to change. */
public final class HugePagesUnavailableException extends IllegalStateException {
    HugePagesUnavailableException(String message) {
        super(message);
    }
}
