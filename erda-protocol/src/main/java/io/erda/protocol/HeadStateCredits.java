package io.erda.protocol;

/**
 * Flow control of the server's unsolicited {@link MessageType#HEAD_STATE} messages (paper §4.4: the server informs
 * every connected client when a head starts and stops being cleaned).
 *
 * <p>A client has no thread of its own, so it may leave notifications unread for a long time; a SEND that finds no
 * receive posted fails after the RNR timeout and, as on RC verbs, kills the connection. So the server never has more
 * than {@link #CREDITS} notifications outstanding on a connection, and a client keeps {@code CREDITS + 1} receives
 * posted (the extra one for the reply to its single outstanding request).
 *
 * <p>Acknowledgement: the header flags of every request carry the number (mod 2^16) of HEAD_STATE messages the
 * client has processed on that connection. A notification that finds no credit is not dropped: the server remembers
 * it and sends the then-current head array once a request acknowledges enough (before answering that request, so a
 * client that waits for a reply learns of it first). A head array supersedes every earlier one, so one pending
 * notification stands for any number of missed ones.
 */
public final class HeadStateCredits {
    public static final int CREDITS = 4;
    private static final int MASK = 0xFFFF;

    private HeadStateCredits() {
    }

    /** The flags of a request that acknowledges {@code processed} notifications. */
    public static int flags(int processed) {
        return processed & MASK;
    }

    /** Whether a request's flags acknowledge the {@code count}-th notification (counts compare mod 2^16). */
    public static boolean covers(int acknowledgedFlags, int count) {
        return ((acknowledgedFlags - count) & MASK) < (MASK + 1) / 2;
    }

    /** Notifications sent and not yet acknowledged, from the server's count and a request's flags. */
    public static int outstanding(int sent, int acknowledgedFlags) {
        return (sent - acknowledgedFlags) & MASK;
    }
}
