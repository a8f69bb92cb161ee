package io.erda.protocol;

/** A message does not parse: the text names the field, the value found and the limit. */
public class WireFormatException extends RuntimeException {
    public WireFormatException(String message) {
        super(message);
    }
}
