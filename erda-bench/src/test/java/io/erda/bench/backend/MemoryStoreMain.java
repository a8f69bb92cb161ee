package io.erda.bench.backend;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Test stand-in for a store server (never a benchmark result): an in-memory map behind a loopback socket, speaking
 * {@link MemoryBackend}'s protocol. Like the real server it prints "listening on URI" and answers STATS with
 * {@code nvm_bytes_written} (bytes of keys and values stored) and {@code server_cpu_ns} (its handler threads).
 * With {@code --fail} it exits before listening, to test failed starts. It answers late, by {@code --slow-by-ms D}:
 * its first {@code --slow-first-gets N} GETs (a cold start), or the first request that arrives {@code --stall-at-ms T}
 * or later after its first GET (one stall).
 */
public final class MemoryStoreMain {
    static final int GET = 1;
    static final int PUT = 2;
    static final int DELETE = 3;
    static final int STATS = 4;

    private static final ConcurrentHashMap<String, byte[]> DATA = new ConcurrentHashMap<>();
    private static final AtomicLong BYTES_WRITTEN = new AtomicLong();
    private static final AtomicLong FINISHED_THREADS_CPU_NS = new AtomicLong();
    private static final ConcurrentHashMap<Long, Boolean> HANDLERS = new ConcurrentHashMap<>();
    private static long slowFirstGets;
    private static long stallAtMs = -1;
    private static long slowByMs;
    private static final AtomicLong GETS = new AtomicLong();
    /** System.nanoTime() of the first GET, 0 before it. */
    private static final AtomicLong FIRST_GET = new AtomicLong();
    private static final java.util.concurrent.atomic.AtomicBoolean STALLED = new java.util.concurrent.atomic.AtomicBoolean();

    public static void main(String[] args) throws IOException {
        if (args.length > 0 && args[0].equals("--fail")) {
            System.err.println("memory store: told to fail");
            System.exit(3);
        }
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--slow-first-gets" -> slowFirstGets = Long.parseLong(args[i + 1]);
                case "--stall-at-ms" -> stallAtMs = Long.parseLong(args[i + 1]);
                case "--slow-by-ms" -> slowByMs = Long.parseLong(args[i + 1]);
                default -> throw new IllegalArgumentException("memory store: unknown option " + args[i]);
            }
        }
        ServerSocket listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        System.out.println("memory-store listening on tcp://127.0.0.1:" + listener.getLocalPort());
        System.out.flush();
        while (true) {
            Socket s = listener.accept();
            Thread.ofPlatform().daemon().start(() -> serve(s));
        }
    }

    private static void serve(Socket socket) {
        long id = Thread.currentThread().threadId();
        HANDLERS.put(id, true);
        try (socket; DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
             DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()))) {
            socket.setTcpNoDelay(true);
            while (true) {
                int op = in.read();
                if (op < 0) {
                    return;
                }
                if (op == GET) {
                    FIRST_GET.compareAndSet(0, System.nanoTime());
                }
                if (op != STATS) {
                    maybeSlow(op == GET && GETS.incrementAndGet() <= slowFirstGets);
                }
                switch (op) {
                    case GET -> {
                        byte[] v = DATA.get(new String(readBytes(in), java.nio.charset.StandardCharsets.ISO_8859_1));
                        out.writeInt(v == null ? -1 : v.length);
                        if (v != null) {
                            out.write(v);
                        }
                    }
                    case PUT -> {
                        byte[] k = readBytes(in);
                        byte[] v = readBytes(in);
                        DATA.put(new String(k, java.nio.charset.StandardCharsets.ISO_8859_1), v);
                        BYTES_WRITTEN.addAndGet(k.length + v.length);
                        out.writeInt(0);
                    }
                    case DELETE -> {
                        DATA.remove(new String(readBytes(in), java.nio.charset.StandardCharsets.ISO_8859_1));
                        out.writeInt(0);
                    }
                    case STATS -> out.writeUTF("nvm_bytes_written=" + BYTES_WRITTEN.get() + "\nserver_cpu_ns=" + cpuNanos() + "\n");
                    default -> throw new IOException("unknown op " + op);
                }
                out.flush();
            }
        } catch (IOException e) {
            // The client went away.
        } finally {
            FINISHED_THREADS_CPU_NS.addAndGet(ManagementFactory.getThreadMXBean().getCurrentThreadCpuTime());
            HANDLERS.remove(id);
        }
    }

    /** Sleeps --slow-by-ms if this request is one of the first slow GETs ({@code coldGet}) or the stall. */
    private static void maybeSlow(boolean coldGet) throws IOException {
        long first = FIRST_GET.get();
        boolean stall = stallAtMs >= 0 && first != 0 && (System.nanoTime() - first) / 1_000_000 >= stallAtMs
            && STALLED.compareAndSet(false, true);
        if (coldGet || stall) {
            try {
                Thread.sleep(slowByMs);
            } catch (InterruptedException e) {
                throw new IOException("interrupted while slow", e);
            }
        }
    }

    private static long cpuNanos() {
        long sum = FINISHED_THREADS_CPU_NS.get();
        for (long id : HANDLERS.keySet()) {
            sum += Math.max(0, ManagementFactory.getThreadMXBean().getThreadCpuTime(id));
        }
        return sum;
    }

    static byte[] readBytes(DataInputStream in) throws IOException {
        byte[] b = new byte[in.readInt()];
        in.readFully(b);
        return b;
    }
}
