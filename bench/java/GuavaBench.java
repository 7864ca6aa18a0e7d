/*
 * GuavaBench: times Guava 31.1's BloomFilter (Funnels.stringFunnel(UTF_8), MURMUR128_MITZ_64) on
 * the same keys as bench/run.ts, inside the JVM after warm-up, and prints one JSON line.
 *
 * Usage: java -Xmx6g -cp /usr/share/java/guava.jar:<dir> GuavaBench <n> <fpp> <rounds>
 * Keys: present "https://example.com/item/<i>", absent "https://example.com/other/<i>", i < n.
 * Before any timing it checks that every present key is found (no false negatives) and counts
 * the false positives among the n absent keys. Each round builds a fresh filter (add), then
 * queries all present keys (has+) and all absent keys (has-); the first round is warm-up and
 * the best of the remaining rounds is reported, as ops/s.
 * Compile: javac -cp /usr/share/java/guava.jar -d <dir> bench/java/GuavaBench.java
 */
import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

public final class GuavaBench {
  private GuavaBench() {}

  static volatile long sink;

  public static void main(String[] args) {
    int n = Integer.parseInt(args[0]);
    double fpp = Double.parseDouble(args[1]);
    int rounds = Integer.parseInt(args[2]);
    String[] present = new String[n];
    String[] absent = new String[n];
    for (int i = 0; i < n; i++) {
      present[i] = "https://example.com/item/" + i;
      absent[i] = "https://example.com/other/" + i;
    }
    double bestAdd = 0;
    double bestHit = 0;
    double bestMiss = 0;
    long falsePositives = -1;
    long bitSize = 0;
    int hashes = 0;
    for (int r = 0; r <= rounds; r++) {
      BloomFilter<CharSequence> f =
          BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), n, fpp);
      long t0 = System.nanoTime();
      for (int i = 0; i < n; i++) f.put(present[i]);
      long t1 = System.nanoTime();
      long hits = 0;
      for (int i = 0; i < n; i++) if (f.mightContain(present[i])) hits++;
      long t2 = System.nanoTime();
      long fp = 0;
      for (int i = 0; i < n; i++) if (f.mightContain(absent[i])) fp++;
      long t3 = System.nanoTime();
      sink += hits + fp;
      if (hits != n) {
        System.err.println("Guava false negatives: " + (n - hits));
        System.exit(1);
      }
      falsePositives = fp;
      if (r == 0) {
        // Warm-up round; also read the shape from the serialized header (k, word count).
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        try {
          f.writeTo(out);
        } catch (java.io.IOException e) {
          throw new RuntimeException(e);
        }
        byte[] b = out.toByteArray();
        hashes = b[1] & 0xff;
        bitSize = 64L * (((b[2] & 0xffL) << 24) | ((b[3] & 0xff) << 16) | ((b[4] & 0xff) << 8) | (b[5] & 0xff));
        continue;
      }
      bestAdd = Math.max(bestAdd, n / ((t1 - t0) / 1e9));
      bestHit = Math.max(bestHit, n / ((t2 - t1) / 1e9));
      bestMiss = Math.max(bestMiss, n / ((t3 - t2) / 1e9));
    }
    System.out.println(
        String.format(
            Locale.ROOT,
            "{\"n\":%d,\"add\":%.1f,\"hasPresent\":%.1f,\"hasAbsent\":%.1f,\"falsePositives\":%d,"
                + "\"bitSize\":%d,\"hashes\":%d,\"java\":\"%s\"}",
            n, bestAdd, bestHit, bestMiss, falsePositives, bitSize, hashes,
            System.getProperty("java.version")));
  }
}
