/*
 * GuavaHarness: a stdin/stdout oracle that runs real Guava (31.1) Bloom filter code so the
 * TypeScript tests can compare bloomkit against it bit for bit. Driven by test/support/guava.ts.
 *
 * Classpath: /usr/share/java/guava.jar (Debian's jar already bundles failureaccess; add
 * failureaccess.jar if your Guava jar does not).
 *
 * ============================== WIRE PROTOCOL ==============================
 * Binary, every number little-endian: u8, i32, i64 (two's complement), f64 (the IEEE 754 bits,
 * so every double crosses exactly). stdin carries requests back to back; each is answered in
 * order, and the harness exits at EOF. Binary because the keys are most of the traffic (a large
 * test sends 2 million of them): a key is its own bytes, with nothing to format or parse.
 *
 * Funnels (u8):  0 string = Funnels.stringFunnel(UTF_8)
 *                1 utf16  = Funnels.unencodedCharsFunnel()
 *                2 int    = Funnels.integerFunnel()
 *                3 long   = Funnels.longFunnel()
 *                4 bytes  = Funnels.byteArrayFunnel()
 * Strategies (u8): the BloomFilterStrategies ordinal, as in writeTo: 0 MURMUR128_MITZ_32,
 *                1 MURMUR128_MITZ_64 (the public create(); MITZ_32 is reached by reflection).
 *
 * A key block:  i32 C, i32 P (0 <= P <= C), then the other C - P keys: their first P keys are
 *               the first P keys of the same request's insert block (build probes only; P = 0
 *               elsewhere). The keys, by funnel:
 *                 string, utf16: C - P lengths (i32, in UTF-16 code units), then all the keys'
 *                   code units back to back, 2 bytes each (lone surrogates survive);
 *                 int: C - P i32;  long: C - P i64;
 *                 bytes: C - P lengths (i32), then all the keys' bytes back to back.
 *               A read's probe block may instead be the single i32 -1 ("same"): the probe keys
 *               of the previous build request.
 *
 * Requests (u8 opcode, then its fields):
 *   1 build   funnel:u8 strategy:u8 n:i64 fpp:f64, key block (inserts), key block (probes)
 *             BloomFilter.create(funnel, n, fpp[, strategy]), put each insert, then mightContain.
 *   2 read    funnel:u8, i32 length + the writeTo bytes, key block (probes)
 *             BloomFilter.readFrom(bytes, funnel), then mightContain.
 *   3 sizing  i32 C, then C pairs n:i64 fpp:f64
 *   4 hash    funnel:u8, key block
 *
 * Responses (each starts with its request's opcode, u8, so a reader out of step notices):
 *   build, read:  u8 status. 1 = failure: i32 length + UTF-8 "<class>: <message>[ | cause:
 *                 <class>: <message>]..." (build: create() threw; read: readFrom() threw).
 *                 0 = ok:  build only: i32 length + the writeTo bytes, i32 count + one byte (0/1)
 *                 per put's return value; then both: i32 count + one byte (0/1) per
 *                 mightContain, i64 approximateElementCount(), f64 expectedFpp().
 *   sizing:  per pair, u8 status: 0 = i64 bitSize, i32 k, u8 source (0 create, 1 formula);
 *            1 = i32 length + UTF-8 error text, as above.
 *            bitSize = 64*N and k come from the writeTo header of a fresh
 *            create(integerFunnel, n, fpp) filter ("create"; writeTo is stopped after the
 *            header, the words are not needed). Filters above 2^30 bits are not
 *            allocated: Guava's own optimalNumOfBits/optimalNumOfHashFunctions are called
 *            reflectively and create()'s remaining checks are mirrored ("formula").
 *   hash:    per key, the 16 bytes of Hashing.murmur3_128().hashObject(key, funnel).asBytes()
 *            (h1 = the first 8 read little-endian = asLong(), h2 = the next 8).
 * Protocol violations: message on stderr, exit status 2.
 */

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import com.google.common.hash.HashFunction;
import com.google.common.hash.Hashing;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;

public final class GuavaHarness {
  private static final int BUILD = 1;
  private static final int READ = 2;
  private static final int SIZING = 3;
  private static final int HASH = 4;
  private static final String[] FUNNELS = {"string", "utf16", "int", "long", "bytes"};
  private static final String[] STRATEGIES = {"MURMUR128_MITZ_32", "MURMUR128_MITZ_64"};
  /** Largest filter (in bits) that sizing mode actually allocates. */
  private static final long SIZING_ALLOC_LIMIT = 1L << 30;

  private final Input in;
  private final Output out;
  /** The probe keys of the last build request (a read's "same" probe block). */
  private Object[] lastProbes;

  private GuavaHarness(Input in, Output out) {
    this.in = in;
    this.out = out;
  }

  public static void main(String[] args) throws Exception {
    Output out = new Output(System.out);
    GuavaHarness h = new GuavaHarness(new Input(System.in), out);
    try {
      int op;
      while ((op = h.in.opcode()) >= 0) {
        out.u8(op);
        h.dispatch(op);
      }
      out.flush();
    } catch (ProtocolException e) {
      out.flush();
      System.err.println("GuavaHarness protocol error: " + e.getMessage());
      System.exit(2);
    }
  }

  private void dispatch(int op) throws IOException {
    switch (op) {
      case BUILD:
        {
          int funnel = funnelId(in.u8());
          int strategy = in.u8();
          if (strategy >= STRATEGIES.length) throw new ProtocolException("unknown strategy " + strategy);
          build(funnel, in.i64(), in.f64(), STRATEGIES[strategy]);
          break;
        }
      case READ:
        read(funnelId(in.u8()));
        break;
      case SIZING:
        sizing();
        break;
      case HASH:
        hash(funnelId(in.u8()));
        break;
      default:
        throw new ProtocolException("unknown opcode: " + op);
    }
  }

  // ------------------------------------------------------------------ modes

  private void build(int funnelId, long n, double fpp, String strategy) throws IOException {
    Funnel<Object> funnel = funnel(funnelId);
    Object[] inserts = readKeys(funnelId, null, false);
    Object[] probes = readKeys(funnelId, inserts, false);
    lastProbes = probes;
    BloomFilter<Object> bf;
    try {
      bf = create(funnel, n, fpp, strategy);
    } catch (Throwable e) {
      writeError(e);
      return;
    }
    byte[] put = new byte[inserts.length];
    for (int i = 0; i < inserts.length; i++) put[i] = bf.put(inserts[i]) ? (byte) 1 : 0;
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    bf.writeTo(bytes);
    out.u8(0);
    out.block(bytes.toByteArray());
    out.block(put);
    writeProbesAndStats(bf, probes);
  }

  private void read(int funnelId) throws IOException {
    Funnel<Object> funnel = funnel(funnelId);
    byte[] data = in.bytes(in.count());
    Object[] probes = readKeys(funnelId, null, true);
    BloomFilter<Object> bf;
    try {
      bf = BloomFilter.readFrom(new ByteArrayInputStream(data), funnel);
    } catch (Throwable e) {
      writeError(e);
      return;
    }
    out.u8(0);
    writeProbesAndStats(bf, probes);
  }

  private void sizing() throws IOException {
    int count = in.count();
    for (int i = 0; i < count; i++) {
      long n = in.i64();
      double fpp = in.f64();
      try {
        long[] sized = sizeOne(n, fpp);
        out.u8(0);
        out.i64(sized[0]);
        out.i32((int) sized[1]);
        out.u8((int) sized[2]);
      } catch (Throwable e) {
        writeError(e);
      }
    }
  }

  private void hash(int funnelId) throws IOException {
    Funnel<Object> funnel = funnel(funnelId);
    Object[] keys = readKeys(funnelId, null, false);
    HashFunction murmur = Hashing.murmur3_128();
    for (Object key : keys) out.raw(murmur.hashObject(key, funnel).asBytes());
  }

  // ------------------------------------------------------------------ Guava access

  @SuppressWarnings("unchecked")
  private static BloomFilter<Object> create(Funnel<Object> funnel, long n, double fpp, String strategy)
      throws Throwable {
    if (strategy.equals("MURMUR128_MITZ_64")) {
      return BloomFilter.create(funnel, n, fpp); // the public entry point
    }
    Class<?> strategies = Class.forName("com.google.common.hash.BloomFilterStrategies");
    Object strategyValue = Enum.valueOf(strategies.asSubclass(Enum.class), strategy);
    Class<?> strategyIface = Class.forName("com.google.common.hash.BloomFilter$Strategy");
    Method m = BloomFilter.class.getDeclaredMethod(
        "create", Funnel.class, long.class, double.class, strategyIface);
    m.setAccessible(true);
    try {
      return (BloomFilter<Object>) m.invoke(null, funnel, n, fpp, strategyValue);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /** The sizing answer for one (n, fpp) pair: {bitSize, k, source (0 create, 1 formula)}. */
  private static long[] sizeOne(long n, double fpp) throws Throwable {
    boolean argsValid = n >= 0 && fpp > 0.0 && fpp < 1.0;
    long effectiveN = n == 0 ? 1 : n;
    long m = argsValid ? (long) invokeStatic("optimalNumOfBits", effectiveN, fpp) : 0;
    if (!argsValid || m <= SIZING_ALLOC_LIMIT) {
      // Real filter; invalid arguments make create() throw its own exception.
      BloomFilter<Integer> bf = BloomFilter.create(Funnels.integerFunnel(), n, fpp);
      HeaderCapture header = new HeaderCapture();
      try {
        bf.writeTo(header);
      } catch (HeaderCapture.Enough e) {
        // the header is all we need: the words would only be thrown away
      }
      int k = header.header[1] & 0xff;
      long words = ((header.header[2] & 0xffL) << 24) | ((header.header[3] & 0xffL) << 16)
          | ((header.header[4] & 0xffL) << 8) | (header.header[5] & 0xffL);
      return new long[] {words * 64, k, 0};
    }
    // Too large to allocate: Guava's own sizing functions plus create()'s remaining checks.
    int k = (int) invokeStatic("optimalNumOfHashFunctions", effectiveN, m);
    long words = (m + 63) / 64; // LongMath.divide(m, 64, CEILING) for m > 0
    String failure = null;
    if (words > Integer.MAX_VALUE) {
      failure = "java.lang.IllegalArgumentException: Out of range: " + words;
    } else if (k <= 0) {
      failure = "java.lang.IllegalArgumentException: numHashFunctions (" + k + ") must be > 0";
    } else if (k > 255) {
      failure = "java.lang.IllegalArgumentException: numHashFunctions (" + k + ") must be <= 255";
    }
    if (failure != null) {
      throw new MirroredFailure("java.lang.IllegalArgumentException: Could not create BloomFilter of "
          + m + " bits | cause: " + failure + " (mirrored; filter not allocated)");
    }
    return new long[] {words * 64, k, 1};
  }

  private static Object invokeStatic(String name, long a, Object b) throws Throwable {
    Method method = b instanceof Double
        ? BloomFilter.class.getDeclaredMethod(name, long.class, double.class)
        : BloomFilter.class.getDeclaredMethod(name, long.class, long.class);
    method.setAccessible(true);
    try {
      return method.invoke(null, a, b);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  private static int funnelId(int id) {
    if (id >= FUNNELS.length) throw new ProtocolException("unknown funnel: " + id);
    return id;
  }

  @SuppressWarnings("unchecked")
  private static Funnel<Object> funnel(int id) {
    Funnel<?> f;
    switch (FUNNELS[id]) {
      case "string":
        f = Funnels.stringFunnel(StandardCharsets.UTF_8);
        break;
      case "utf16":
        f = Funnels.unencodedCharsFunnel();
        break;
      case "int":
        f = Funnels.integerFunnel();
        break;
      case "long":
        f = Funnels.longFunnel();
        break;
      default:
        f = Funnels.byteArrayFunnel();
        break;
    }
    return (Funnel<Object>) f;
  }

  // ------------------------------------------------------------------ output helpers

  private void writeProbesAndStats(BloomFilter<Object> bf, Object[] probes) throws IOException {
    byte[] probe = new byte[probes.length];
    for (int i = 0; i < probes.length; i++) probe[i] = bf.mightContain(probes[i]) ? (byte) 1 : 0;
    out.block(probe);
    out.i64(bf.approximateElementCount());
    out.i64(Double.doubleToRawLongBits(bf.expectedFpp()));
  }

  private void writeError(Throwable e) throws IOException {
    if (e instanceof ProtocolException) throw (ProtocolException) e;
    StringBuilder sb = new StringBuilder();
    if (e instanceof MirroredFailure) {
      sb.append(e.getMessage());
    } else {
      describe(sb, e);
      int depth = 0;
      for (Throwable c = e.getCause(); c != null && c != e && depth < 5; c = c.getCause(), depth++) {
        sb.append(" | cause: ");
        describe(sb, c);
      }
    }
    out.u8(1);
    out.block(sb.toString().getBytes(StandardCharsets.UTF_8));
  }

  private static void describe(StringBuilder sb, Throwable e) {
    sb.append(e.getClass().getName());
    if (e.getMessage() != null) sb.append(": ").append(e.getMessage());
  }

  // ------------------------------------------------------------------ input helpers

  /**
   * Reads a key block. {@code prefix}: the keys its first P may come from (null where P must be
   * 0). {@code same}: whether a count of -1 may stand for the last build's probes.
   */
  private Object[] readKeys(int funnelId, Object[] prefix, boolean same) throws IOException {
    int count = in.i32();
    if (count == -1 && same) {
      if (lastProbes == null) throw new ProtocolException("'same' probes before any build");
      return lastProbes;
    }
    if (count < 0) throw new ProtocolException("negative key count: " + count);
    int reused = in.count();
    if (reused > count || (reused > 0 && (prefix == null || reused > prefix.length))) {
      throw new ProtocolException("key block reuses more keys than it may: " + reused);
    }
    Object[] keys = new Object[count];
    if (reused > 0) System.arraycopy(prefix, 0, keys, 0, reused);
    switch (FUNNELS[funnelId]) {
      case "string":
      case "utf16":
        {
          int[] lengths = lengths(count - reused);
          char[] chars = in.chars(sum(lengths));
          for (int i = reused, off = 0; i < count; i++) {
            int len = lengths[i - reused];
            keys[i] = new String(chars, off, len); // char by char: lone surrogates survive
            off += len;
          }
          break;
        }
      case "int":
        for (int i = reused; i < count; i++) keys[i] = in.i32();
        break;
      case "long":
        for (int i = reused; i < count; i++) keys[i] = in.i64();
        break;
      default:
        {
          int[] lengths = lengths(count - reused);
          for (int i = reused; i < count; i++) keys[i] = in.bytes(lengths[i - reused]);
          break;
        }
    }
    return keys;
  }

  /** {@code n} non-negative i32 lengths. */
  private int[] lengths(int n) throws IOException {
    int[] lengths = new int[n];
    for (int i = 0; i < n; i++) lengths[i] = in.count();
    return lengths;
  }

  private static int sum(int[] lengths) {
    long total = 0;
    for (int len : lengths) total += len;
    if (total > Integer.MAX_VALUE / 2) throw new ProtocolException("key block too large");
    return (int) total;
  }

  // ------------------------------------------------------------------ small types

  /** Signals malformed input; aborts the process with exit status 2. */
  private static final class ProtocolException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ProtocolException(String message) {
      super(message);
    }
  }

  /** A refusal the sizing mode mirrors from create() without calling it: its text is the answer. */
  private static final class MirroredFailure extends Exception {
    private static final long serialVersionUID = 1L;

    MirroredFailure(String message) {
      super(message);
    }
  }

  /** Little-endian reads from a buffered stream. */
  private static final class Input {
    private final InputStream in;
    private final byte[] buf = new byte[1 << 16];
    private int pos;
    private int end;

    Input(InputStream in) {
      this.in = in;
    }

    /** Refills the buffer; false at EOF. */
    private boolean fill() throws IOException {
      if (pos < end) return true;
      int n = in.read(buf, 0, buf.length);
      if (n <= 0) return false;
      pos = 0;
      end = n;
      return true;
    }

    /** The next request's opcode, or -1 at a clean EOF. */
    int opcode() throws IOException {
      return fill() ? buf[pos++] & 0xff : -1;
    }

    int u8() throws IOException {
      if (!fill()) throw new ProtocolException("unexpected end of input");
      return buf[pos++] & 0xff;
    }

    int i32() throws IOException {
      if (end - pos >= 4) {
        int v = (buf[pos] & 0xff) | (buf[pos + 1] & 0xff) << 8 | (buf[pos + 2] & 0xff) << 16
            | buf[pos + 3] << 24;
        pos += 4;
        return v;
      }
      return u8() | u8() << 8 | u8() << 16 | u8() << 24;
    }

    long i64() throws IOException {
      long lo = i32() & 0xffffffffL;
      return lo | (long) i32() << 32;
    }

    double f64() throws IOException {
      return Double.longBitsToDouble(i64());
    }

    /** A non-negative i32. */
    int count() throws IOException {
      int c = i32();
      if (c < 0) throw new ProtocolException("negative count: " + c);
      return c;
    }

    byte[] bytes(int n) throws IOException {
      byte[] b = new byte[n];
      int off = 0;
      while (off < n) {
        if (!fill()) throw new ProtocolException("unexpected end of input");
        int take = Math.min(n - off, end - pos);
        System.arraycopy(buf, pos, b, off, take);
        pos += take;
        off += take;
      }
      return b;
    }

    /** {@code n} UTF-16 code units, 2 bytes each. */
    char[] chars(int n) throws IOException {
      byte[] b = bytes(2 * n);
      char[] c = new char[n];
      for (int i = 0; i < n; i++) c[i] = (char) ((b[2 * i] & 0xff) | (b[2 * i + 1] & 0xff) << 8);
      return c;
    }
  }

  /** Little-endian writes to a buffered stream. */
  private static final class Output {
    private final OutputStream out;
    private final byte[] buf = new byte[1 << 16];
    private int pos;

    Output(OutputStream out) {
      this.out = out;
    }

    private void room(int n) throws IOException {
      if (pos + n > buf.length) flush();
    }

    void flush() throws IOException {
      out.write(buf, 0, pos);
      pos = 0;
      out.flush();
    }

    void u8(int v) throws IOException {
      room(1);
      buf[pos++] = (byte) v;
    }

    void i32(int v) throws IOException {
      room(4);
      buf[pos] = (byte) v;
      buf[pos + 1] = (byte) (v >>> 8);
      buf[pos + 2] = (byte) (v >>> 16);
      buf[pos + 3] = (byte) (v >>> 24);
      pos += 4;
    }

    void i64(long v) throws IOException {
      i32((int) v);
      i32((int) (v >>> 32));
    }

    void raw(byte[] b) throws IOException {
      if (b.length > buf.length) {
        flush();
        out.write(b);
        return;
      }
      room(b.length);
      System.arraycopy(b, 0, buf, pos, b.length);
      pos += b.length;
    }

    /** An i32 length, then the bytes. */
    void block(byte[] b) throws IOException {
      i32(b.length);
      raw(b);
    }
  }

  /** Keeps the 6-byte writeTo header, and stops writeTo with {@link Enough} before the words. */
  private static final class HeaderCapture extends OutputStream {
    /** Thrown once the header is in: writeTo passes it on. */
    static final class Enough extends IOException {
      private static final long serialVersionUID = 1L;
    }

    final byte[] header = new byte[6];
    private int seen;

    @Override
    public void write(int b) throws IOException {
      if (seen == 6) throw new Enough();
      header[seen++] = (byte) b;
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      for (int i = 0; i < len; i++) write(b[off + i]);
    }
  }
}
