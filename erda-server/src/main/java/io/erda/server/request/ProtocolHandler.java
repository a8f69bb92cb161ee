package io.erda.server.request;

import io.erda.protocol.BodyEncoder;
import io.erda.protocol.MessageType;
import io.erda.protocol.WireStatus;
import io.erda.server.store.RequestException;

/**
 * The requests of one protocol (chosen per connection by the connect private data: Erda, or a baseline added
 * later as another implementation). Exactly one reply per request, through {@link Replies}; a refused request
 * throws {@link RequestException} (or {@code WireFormatException} for a malformed body) and the dispatcher turns it
 * into an ERROR reply.
 */
public interface ProtocolHandler {
    void handle(Request request, Replies replies);

    /** Sends the reply of the request being handled. */
    interface Replies {
        void reply(MessageType type, WireStatus status, int maxBodyLength, BodyEncoder body);
    }
}
