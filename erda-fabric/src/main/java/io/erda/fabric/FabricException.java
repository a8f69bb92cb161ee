package io.erda.fabric;

/** A fabric call failed: connection set-up, a full queue, a registration the provider cannot make. */
public class FabricException extends RuntimeException {
    public FabricException(String message) {
        super(message);
    }

    public FabricException(String message, Throwable cause) {
        super(message, cause);
    }
}
