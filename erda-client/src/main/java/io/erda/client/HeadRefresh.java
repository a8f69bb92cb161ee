package io.erda.client;

import io.erda.protocol.BodyEncoder;
import io.erda.protocol.HeadArray;
import io.erda.protocol.MessageType;

/** HEADS: refreshes a connection's cached head array when it meets a region it does not know (chain growth). */
final class HeadRefresh {
    private HeadRefresh() {
    }

    static void refresh(Connection c) {
        HeadArray heads = c.call(MessageType.HEADS, BodyEncoder.EMPTY,
                reply -> HeadArray.decode(reply.expect(MessageType.HEADS_REPLY).body(), 0, (int) reply.body().byteSize()));
        c.view().updateHeads(heads);
    }
}
