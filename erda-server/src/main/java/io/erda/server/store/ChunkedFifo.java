package io.erda.server.store;

/**
 * A first-in first-out queue in linked chunks of {@link #CHUNK} elements: adding never copies what is queued, so its
 * cost does not grow with the queue. An {@link java.util.ArrayDeque} that outgrows its array copies all of it into
 * one half as large again; the deadline queue of {@link Reservations} holds a lease and a quarter of PUTs (190k at
 * 150k PUTs/s), and one such growth costs a worker milliseconds under the store lock (with generational ZGC a
 * reference array is copied element by element through its barriers). One emptied chunk is kept for reuse, so a
 * steady queue allocates nothing. Not thread-safe.
 */
final class ChunkedFifo<T> {
    /** Elements per chunk: 4 KiB of references with compressed oops. */
    static final int CHUNK = 1024;

    private static final class Chunk {
        final Object[] elements = new Object[CHUNK];
        Chunk next;
    }

    /** The chunk the oldest element is in, and its index there. */
    private Chunk head = new Chunk();
    private int headIndex;
    /** The chunk the next element goes into, and its index there. */
    private Chunk tail = head;
    private int tailIndex;
    private Chunk spare;
    private int size;

    void addLast(T element) {
        if (element == null) {
            throw new NullPointerException("null element");
        }
        if (tailIndex == CHUNK) {
            Chunk next = spare != null ? spare : new Chunk();
            spare = null;
            tail.next = next;
            tail = next;
            tailIndex = 0;
        }
        tail.elements[tailIndex++] = element;
        size++;
    }

    /** The oldest element, or null if empty. */
    @SuppressWarnings("unchecked")
    T peekFirst() {
        return size == 0 ? null : (T) head.elements[headIndex];
    }

    /** Removes and returns the oldest element, or null if empty. */
    @SuppressWarnings("unchecked")
    T pollFirst() {
        if (size == 0) {
            return null;
        }
        T element = (T) head.elements[headIndex];
        head.elements[headIndex++] = null;
        size--;
        if (size == 0) {
            headIndex = 0; // the last element was in the tail chunk (head == tail): use it again from its start
            tailIndex = 0;
        } else if (headIndex == CHUNK) {
            Chunk done = head;
            head = done.next;
            done.next = null;
            headIndex = 0;
            spare = done;
        }
        return element;
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }
}
