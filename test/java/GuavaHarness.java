/*
 * GuavaHarness: a stdin/stdout oracle that runs real Guava (31.1) Bloom filter code so the
 * TypeScript tests can compare bloomkit against it bit for bit. Driven by test/support/guava.ts.
 *
 * Classpath: /usr/share/java/guava.jar (Debian's jar already bundles failureaccess; add
 * failureaccess.jar if your Guava jar does not).
 *
 * ============================== WIRE PROTOCOL ==============================
 * All traffic is ASCII, lines end with '\n' ('\r' before it is tolerated). stdin carries one or
 * more requests back to back; each is answered in order and the harness exits at EOF. Every
 * response ends with a line "end".
 *
 * Funnels:  string = Funnels.stringFunnel(UTF_8)     key line: UTF-16 code units, 4 hex digits each
 *           utf16  = Funnels.unencodedCharsFunnel()  key line: same as string
 *           int    = Funnels.integerFunnel()         key line: decimal int32
 *           long   = Funnels.longFunnel()            key line: decimal int64
 *           bytes  = Funnels.byteArrayFunnel()       key line: 2 hex digits per byte
 *   (String and byte keys may be empty, i.e. an empty line: that is the empty string / array.
 *    Hex digits are accepted in either case. A string key line may instead start with '"': the
 *    rest of the line is the key itself, printable ASCII 0x20-0x7e, one char per byte.)
 * A "key block" is a line holding a decimal count C followed by exactly C key lines. The count
 * line may also be "C P" (0 <= P <= C): the block's first P keys are the first P keys of the
 * same request's insert block (build probes only), and only C - P key lines follow. A read's
 * probe block may be the single line "same": the probe keys of the previous build request.
 *
 * Requests (header tokens are separated by single spaces):
 *   build <funnel> <n> <fpp> [<strategy>]   then: key block (inserts), key block (probes)
 *       n: decimal int64, fpp: decimal double (Double.parseDouble), strategy: a
 *       BloomFilterStrategies constant, default MURMUR128_MITZ_64 (public create()); any other
 *       name (MURMUR128_MITZ_32) goes through the package-private
 *       create(Funnel, long, double, Strategy) via reflection.
 *   read <funnel>                           then: one line = hex of the writeTo bytes, key block (probes)
 *   sizing                                  then: count line C, C lines "<n> <fpp>"
 *   hash <funnel>                           then: key block
 *
 * Responses (one "name value" per line; value may be empty, e.g. "put " for zero inserts):
 *   build ok:  ok | bytes <hex of writeTo> | put <'0'/'1' per insert> | probe <'0'/'1' per probe>
 *              | approx <approximateElementCount()> | fpp <16 hex digits: doubleToRawLongBits(expectedFpp())>
 *              <Double.toString, informative only> | end
 *   read ok:   ok | probe ... | approx ... | fpp ... | end
 *   failure:   error <class>: <message>[ | cause: <class>: <message>]... | end
 *              (build: create() threw; read: readFrom() threw. Newlines in messages become spaces.)
 *   sizing:    one line per pair: "<bitSize> <k> <create|formula>" or "error <text>", then end.
 *              bitSize = 64*N and k come from the writeTo header of a fresh
 *              create(integerFunnel, n, fpp) filter ("create"). Filters above 2^30 bits are not
 *              allocated: Guava's own optimalNumOfBits/optimalNumOfHashFunctions are called
 *              reflectively and create()'s remaining checks are mirrored ("formula").
 *   hash:      one line per key: "<h1> <h2>", each 16 hex digits (unsigned, big-endian digits) where
 *              h1/h2 = the first/second 8 bytes of Hashing.murmur3_128().hashObject(key, funnel)
 *              .asBytes() read little-endian (h1 == asLong()); then end.
 * Protocol violations: message on stderr, exit status 2.
 */

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;
import com.google.common.hash.HashFunction;
import com.google.common.hash.Hashing;
import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.OutputStreamWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;

public final class GuavaHarness {
  private static final char[] HEX = "0123456789abcdef".toCharArray();
  /** Largest filter (in bits) that sizing mode actually allocates. */
  private static final long SIZING_ALLOC_LIMIT = 1L << 30;

  private final BufferedReader in;
  private final BufferedWriter out;
  /** The probe keys of the last build request (a read's "same" probe block). */
  private Object[] lastProbes;

  private GuavaHarness(BufferedReader in, BufferedWriter out) {
    this.in = in;
    this.out = out;
  }

  public static void main(String[] args) throws Exception {
    BufferedReader in =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII), 1 << 16);
    BufferedWriter out =
        new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.US_ASCII), 1 << 16);
    GuavaHarness h = new GuavaHarness(in, out);
    try {
      String header;
      while ((header = in.readLine()) != null) {
        header = stripCr(header);
        if (header.isEmpty()) continue;
        h.dispatch(header.split(" "));
        out.write("end\n");
      }
      out.flush();
    } catch (ProtocolException e) {
      out.flush();
      System.err.println("GuavaHarness protocol error: " + e.getMessage());
      System.exit(2);
    }
  }

  private void dispatch(String[] t) throws IOException {
    switch (t[0]) {
      case "build":
        if (t.length < 4 || t.length > 5) throw new ProtocolException("build <funnel> <n> <fpp> [strategy]");
        build(t[1], parseLong(t[2]), parseDouble(t[3]), t.length == 5 ? t[4] : "MURMUR128_MITZ_64");
        break;
      case "read":
        if (t.length != 2) throw new ProtocolException("read <funnel>");
        read(t[1]);
        break;
      case "sizing":
        if (t.length != 1) throw new ProtocolException("sizing takes no header arguments");
        sizing();
        break;
      case "hash":
        if (t.length != 2) throw new ProtocolException("hash <funnel>");
        hash(t[1]);
        break;
      default:
        throw new ProtocolException("unknown mode: " + t[0]);
    }
  }

  // ------------------------------------------------------------------ modes

  private void build(String funnelName, long n, double fpp, String strategy) throws IOException {
    Funnel<Object> funnel = funnel(funnelName);
    Object[] inserts = readKeys(funnelName, null);
    Object[] probes = readKeys(funnelName, inserts);
    lastProbes = probes;
    BloomFilter<Object> bf;
    try {
      bf = create(funnel, n, fpp, strategy);
    } catch (Throwable e) {
      writeError(e);
      return;
    }
    char[] put = new char[inserts.length];
    for (int i = 0; i < inserts.length; i++) put[i] = bf.put(inserts[i]) ? '1' : '0';
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    bf.writeTo(bytes);
    out.write("ok\nbytes ");
    writeHex(bytes.toByteArray());
    out.write("\nput ");
    out.write(put);
    out.write('\n');
    writeProbesAndStats(bf, probes);
  }

  private void read(String funnelName) throws IOException {
    Funnel<Object> funnel = funnel(funnelName);
    byte[] data = parseHexBytes(nextLine());
    Object[] probes = readKeys(funnelName, null);
    BloomFilter<Object> bf;
    try {
      bf = BloomFilter.readFrom(new ByteArrayInputStream(data), funnel);
    } catch (Throwable e) {
      writeError(e);
      return;
    }
    out.write("ok\n");
    writeProbesAndStats(bf, probes);
  }

  private void sizing() throws IOException {
    int count = parseCount(nextLine());
    for (int i = 0; i < count; i++) {
      String[] t = nextLine().split(" ");
      if (t.length != 2) throw new ProtocolException("sizing line must be '<n> <fpp>'");
      long n = parseLong(t[0]);
      double fpp = parseDouble(t[1]);
      try {
        out.write(sizeOne(n, fpp));
      } catch (Throwable e) {
        writeError(e);
      }
    }
  }

  private void hash(String funnelName) throws IOException {
    Funnel<Object> funnel = funnel(funnelName);
    Object[] keys = readKeys(funnelName, null);
    HashFunction murmur = Hashing.murmur3_128();
    char[] line = new char[34];
    line[16] = ' ';
    line[33] = '\n';
    for (Object key : keys) {
      byte[] h = murmur.hashObject(key, funnel).asBytes();
      // h1 = bytes 0..7 little-endian; print most significant digit first.
      for (int i = 0; i < 8; i++) {
        int b1 = h[7 - i] & 0xff;
        int b2 = h[15 - i] & 0xff;
        line[2 * i] = HEX[b1 >>> 4];
        line[2 * i + 1] = HEX[b1 & 15];
        line[17 + 2 * i] = HEX[b2 >>> 4];
        line[17 + 2 * i + 1] = HEX[b2 & 15];
      }
      out.write(line);
    }
  }

  // ------------------------------------------------------------------ Guava access

  @SuppressWarnings("unchecked")
  private static BloomFilter<Object> create(Funnel<Object> funnel, long n, double fpp, String strategy)
      throws Throwable {
    if (strategy.equals("MURMUR128_MITZ_64")) {
      return BloomFilter.create(funnel, n, fpp); // the public entry point
    }
    Class<?> strategies = Class.forName("com.google.common.hash.BloomFilterStrategies");
    Object strategyValue;
    try {
      strategyValue = Enum.valueOf(strategies.asSubclass(Enum.class), strategy);
    } catch (IllegalArgumentException e) {
      throw new ProtocolException("unknown strategy: " + strategy);
    }
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

  /** The sizing answer line for one (n, fpp) pair, newline included. */
  private static String sizeOne(long n, double fpp) throws Throwable {
    boolean argsValid = n >= 0 && fpp > 0.0 && fpp < 1.0;
    long effectiveN = n == 0 ? 1 : n;
    long m = argsValid ? (long) invokeStatic("optimalNumOfBits", effectiveN, fpp) : 0;
    if (!argsValid || m <= SIZING_ALLOC_LIMIT) {
      // Real filter; invalid arguments make create() throw its own exception.
      BloomFilter<Integer> bf = BloomFilter.create(Funnels.integerFunnel(), n, fpp);
      HeaderCapture header = new HeaderCapture();
      bf.writeTo(header);
      int k = header.header[1] & 0xff;
      long words = ((header.header[2] & 0xffL) << 24) | ((header.header[3] & 0xffL) << 16)
          | ((header.header[4] & 0xffL) << 8) | (header.header[5] & 0xffL);
      return (words * 64) + " " + k + " create\n";
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
      return "error java.lang.IllegalArgumentException: Could not create BloomFilter of " + m
          + " bits | cause: " + failure + " (mirrored; filter not allocated)\n";
    }
    return (words * 64) + " " + k + " formula\n";
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

  @SuppressWarnings("unchecked")
  private static Funnel<Object> funnel(String name) {
    Funnel<?> f;
    switch (name) {
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
      case "bytes":
        f = Funnels.byteArrayFunnel();
        break;
      default:
        throw new ProtocolException("unknown funnel: " + name);
    }
    return (Funnel<Object>) f;
  }

  // ------------------------------------------------------------------ output helpers

  private void writeProbesAndStats(BloomFilter<Object> bf, Object[] probes) throws IOException {
    char[] probe = new char[probes.length];
    for (int i = 0; i < probes.length; i++) probe[i] = bf.mightContain(probes[i]) ? '1' : '0';
    out.write("probe ");
    out.write(probe);
    out.write("\napprox ");
    out.write(Long.toString(bf.approximateElementCount()));
    double fpp = bf.expectedFpp();
    out.write("\nfpp ");
    long bits = Double.doubleToRawLongBits(fpp);
    for (int shift = 60; shift >= 0; shift -= 4) out.write(HEX[(int) (bits >>> shift) & 15]);
    out.write(' ');
    out.write(Double.toString(fpp));
    out.write('\n');
  }

  private void writeError(Throwable e) throws IOException {
    if (e instanceof ProtocolException) throw (ProtocolException) e;
    StringBuilder sb = new StringBuilder("error ");
    describe(sb, e);
    int depth = 0;
    for (Throwable c = e.getCause(); c != null && c != e && depth < 5; c = c.getCause(), depth++) {
      sb.append(" | cause: ");
      describe(sb, c);
    }
    for (int i = 0; i < sb.length(); i++) {
      char ch = sb.charAt(i);
      if (ch == '\n' || ch == '\r' || ch > 0x7e) sb.setCharAt(i, ch > 0x7e ? '?' : ' ');
    }
    sb.append('\n');
    out.write(sb.toString());
  }

  private static void describe(StringBuilder sb, Throwable e) {
    sb.append(e.getClass().getName());
    if (e.getMessage() != null) sb.append(": ").append(e.getMessage());
  }

  private void writeHex(byte[] data) throws IOException {
    char[] buf = new char[8192];
    int pos = 0;
    for (byte b : data) {
      if (pos == buf.length) {
        out.write(buf, 0, pos);
        pos = 0;
      }
      buf[pos++] = HEX[(b >>> 4) & 15];
      buf[pos++] = HEX[b & 15];
    }
    out.write(buf, 0, pos);
  }

  // ------------------------------------------------------------------ input helpers

  private String nextLine() throws IOException {
    String line = in.readLine();
    if (line == null) throw new ProtocolException("unexpected end of input");
    return stripCr(line);
  }

  /**
   * Reads a key block. {@code prefix}: the keys a "C P" count line may take its first P from
   * (null where that form is not allowed). A "same" count line gives the last build's probes.
   */
  private Object[] readKeys(String funnelName, Object[] prefix) throws IOException {
    String head = nextLine();
    if (head.equals("same")) {
      if (lastProbes == null) throw new ProtocolException("'same' probes before any build");
      return lastProbes;
    }
    String[] t = head.split(" ");
    if (t.length > 2 || (t.length == 2 && prefix == null)) {
      throw new ProtocolException("bad key block count line: '" + head + "'");
    }
    int count = parseCount(t[0]);
    int reused = t.length == 2 ? parseCount(t[1]) : 0;
    if (reused > count || (prefix != null && reused > prefix.length)) {
      throw new ProtocolException("key block reuses more keys than it may: '" + head + "'");
    }
    Object[] keys = new Object[count];
    if (reused > 0) System.arraycopy(prefix, 0, keys, 0, reused);
    switch (funnelName) {
      case "string":
      case "utf16":
        for (int i = reused; i < count; i++) keys[i] = parseStringKey(nextLine());
        break;
      case "int":
        for (int i = reused; i < count; i++) keys[i] = parseInt(nextLine());
        break;
      case "long":
        for (int i = reused; i < count; i++) keys[i] = parseLong(nextLine());
        break;
      case "bytes":
        for (int i = reused; i < count; i++) keys[i] = parseHexBytes(nextLine());
        break;
      default:
        throw new ProtocolException("unknown funnel: " + funnelName);
    }
    return keys;
  }

  /** A string key line: '"' and the literal printable-ASCII key, or UTF-16 code units in hex. */
  private static String parseStringKey(String line) {
    if (line.isEmpty() || line.charAt(0) != '"') return parseHexChars(line);
    for (int i = 1; i < line.length(); i++) {
      char c = line.charAt(i);
      if (c < 0x20 || c > 0x7e) throw new ProtocolException("non-printable char in a literal key");
    }
    return line.substring(1);
  }

  private static String stripCr(String s) {
    return s.endsWith("\r") ? s.substring(0, s.length() - 1) : s;
  }

  private static int parseCount(String s) {
    int c = parseInt(s);
    if (c < 0) throw new ProtocolException("negative count: " + s);
    return c;
  }

  private static int parseInt(String s) {
    try {
      return Integer.parseInt(s);
    } catch (NumberFormatException e) {
      throw new ProtocolException("bad int32: '" + s + "'");
    }
  }

  private static long parseLong(String s) {
    try {
      return Long.parseLong(s);
    } catch (NumberFormatException e) {
      throw new ProtocolException("bad int64: '" + s + "'");
    }
  }

  private static double parseDouble(String s) {
    try {
      return Double.parseDouble(s);
    } catch (NumberFormatException e) {
      throw new ProtocolException("bad double: '" + s + "'");
    }
  }

  private static int hexDigit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw new ProtocolException("bad hex digit: '" + c + "'");
  }

  private static byte[] parseHexBytes(String s) {
    if ((s.length() & 1) != 0) throw new ProtocolException("odd-length hex byte string");
    byte[] b = new byte[s.length() / 2];
    for (int i = 0; i < b.length; i++) {
      b[i] = (byte) ((hexDigit(s.charAt(2 * i)) << 4) | hexDigit(s.charAt(2 * i + 1)));
    }
    return b;
  }

  private static String parseHexChars(String s) {
    if ((s.length() & 3) != 0) throw new ProtocolException("UTF-16 hex key length not a multiple of 4");
    char[] c = new char[s.length() / 4];
    for (int i = 0; i < c.length; i++) {
      int j = 4 * i;
      c[i] = (char) ((hexDigit(s.charAt(j)) << 12) | (hexDigit(s.charAt(j + 1)) << 8)
          | (hexDigit(s.charAt(j + 2)) << 4) | hexDigit(s.charAt(j + 3)));
    }
    return new String(c); // char by char: lone surrogates survive
  }

  // ------------------------------------------------------------------ small types

  /** Signals malformed input; aborts the process with exit status 2. */
  private static final class ProtocolException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ProtocolException(String message) {
      super(message);
    }
  }

  /** Keeps the 6-byte writeTo header and discards the bit array. */
  private static final class HeaderCapture extends OutputStream {
    final byte[] header = new byte[6];
    private long seen;

    @Override
    public void write(int b) {
      if (seen < 6) header[(int) seen] = (byte) b;
      seen++;
    }

    @Override
    public void write(byte[] b, int off, int len) {
      if (seen < 6) System.arraycopy(b, off, header, (int) seen, (int) Math.min(len, 6 - seen));
      seen += len;
    }
  }
}
