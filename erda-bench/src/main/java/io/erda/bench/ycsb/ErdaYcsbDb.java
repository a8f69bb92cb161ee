package io.erda.bench.ycsb;

import io.erda.bench.backend.StoreBackends;
import io.erda.bench.backend.StoreClient;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

/**
 * YCSB binding ({@code -db io.erda.bench.ycsb.ErdaYcsbDb}) over a store's client library.
 *
 * <p>Properties:
 * <ul>
 *   <li>{@code erda.protocol}: {@code erda} (default), {@code redo-log}, {@code read-after-write}, or any other
 *       protocol a backend on the class path serves, e.g. {@code redis};</li>
 *   <li>{@code erda.uri}: the server, e.g. {@code shm:///dev/shm/erda-ycsb/erda}, {@code tcp://127.0.0.1:7000} or
 *       {@code redis://127.0.0.1:6379} (required);</li>
 *   <li>{@code erda.valuesize}: the largest value the client must handle, in bytes (default: an upper bound of the encoded size of
 *       {@code fieldcount} fields of {@code fieldlength} bytes);</li>
 *   <li>every other {@code erda.*} property is handed to the client library as an option;</li>
 *   <li>{@code latency.hdr.path}: where the binding writes its own latency histograms, in ns
 *       ({@link OperationLatency}; YCSB's own are in whole µs).</li>
 * </ul>
 *
 * <p>YCSB makes one DB instance per client thread; each opens its own connection ({@link StoreClient}).
 *
 * <p>Records: the key is the UTF-8 bytes of YCSB's key; the table name is ignored (the core workloads use one
 * table). All fields of a record are stored as one value in {@link RecordEncoding}. An update stores the fields it
 * is given as the whole new record, with no read-modify-write (which would add a GET to every update and distort
 * the comparison); our workload files set {@code writeallfields=true}, so YCSB always gives all of them. A read
 * returns the requested fields. Scan is not supported (a hash store has no key order).
 *
 * <p>A failed operation returns {@link Status#ERROR}; the first failure of each thread is also printed to stderr
 * with its cause, since YCSB itself only counts them.
 */
public final class ErdaYcsbDb extends DB {

    /**
     * Printed to stderr by every thread once connected, and before it disconnects: the driver reads the server's
     * counters when all threads have connected and when the first one closes, so connection set-up and tear-down
     * are not charged to the operations.
     */
    public static final String CONNECTED = "erda-ycsb: connected";
    public static final String CLOSING = "erda-ycsb: closing";

    private StoreClient client;
    private OperationLatency latency;
    private boolean failureReported;

    @Override
    public void init() throws DBException {
        Properties p = getProperties();
        latency = OperationLatency.of(p);
        String protocol = p.getProperty("erda.protocol", "erda");
        String uri = p.getProperty("erda.uri");
        if (uri == null) {
            throw new DBException("property erda.uri (the server's URI) is not set");
        }
        Properties options = new Properties();
        for (String name : p.stringPropertyNames()) {
            if (name.startsWith("erda.")) {
                options.setProperty(name, p.getProperty(name));
            }
        }
        if (!options.containsKey("erda.valuesize")) {
            int fields = Integer.parseInt(p.getProperty("fieldcount", "10"));
            int length = Integer.parseInt(p.getProperty("fieldlength", "100"));
            options.setProperty("erda.valuesize", Integer.toString(fields * (length + 16) + 5));
        }
        try {
            client = StoreBackends.forProtocol(protocol).connect(protocol, uri, options);
        } catch (Exception e) {
            throw new DBException("cannot connect to " + uri + " with protocol " + protocol + ": " + e, e);
        }
        System.err.println(CONNECTED);
    }

    @Override
    public void cleanup() throws DBException {
        if (latency != null) {
            try {
                latency.publish();
            } catch (java.io.IOException e) {
                throw new DBException("writing the latency histograms failed: " + e, e);
            }
        }
        if (client != null) {
            System.err.println(CLOSING);
            try {
                client.close();
            } catch (Exception e) {
                throw new DBException("closing the connection failed: " + e, e);
            }
        }
    }

    @Override
    public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
        long intended = latency.intendedStart();
        long start = System.nanoTime();
        try {
            byte[] stored = client.get(key(key));
            if (stored == null) {
                return Status.NOT_FOUND;
            }
            RecordEncoding.decode(stored, fields, result);
            latency.record(OperationLatency.Op.READ, intended, start);
            return Status.OK;
        } catch (Exception e) {
            return failed("read", key, e);
        }
    }

    @Override
    public Status update(String table, String key, Map<String, ByteIterator> values) {
        return write(OperationLatency.Op.UPDATE, key, values);
    }

    @Override
    public Status insert(String table, String key, Map<String, ByteIterator> values) {
        return write(OperationLatency.Op.INSERT, key, values);
    }

    private Status write(OperationLatency.Op op, String key, Map<String, ByteIterator> values) {
        long intended = latency.intendedStart();
        long start = System.nanoTime();
        try {
            client.put(key(key), RecordEncoding.encode(values));
            latency.record(op, intended, start);
            return Status.OK;
        } catch (Exception e) {
            return failed("write", key, e);
        }
    }

    @Override
    public Status delete(String table, String key) {
        long intended = latency.intendedStart();
        long start = System.nanoTime();
        try {
            client.delete(key(key));
            latency.record(OperationLatency.Op.DELETE, intended, start);
            return Status.OK;
        } catch (Exception e) {
            return failed("delete", key, e);
        }
    }

    @Override
    public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                       Vector<HashMap<String, ByteIterator>> result) {
        return Status.NOT_IMPLEMENTED;
    }

    private static byte[] key(String key) {
        return key.getBytes(StandardCharsets.UTF_8);
    }

    private Status failed(String op, String key, Exception e) {
        if (!failureReported) {
            failureReported = true;
            System.err.println("erda-ycsb: " + op + " of key " + key + " failed: " + e);
        }
        return Status.ERROR;
    }
}
