/**
 * Test-only bridge to real Guava 31.1 through test/java/GuavaHarness.java.
 *
 * The harness is compiled once per process into test/.java-build/<hash>/ (falling back to
 * os.tmpdir() if the repo is read-only). The cache key hashes the Java source, the classpath and
 * the javac version, so editing the source recompiles it. Every wrapper runs one short-lived JVM
 * (about 0.1-0.3 s of CPU to start). The `...Many` variants answer a whole batch from one JVM, and
 * {@link GuavaBatch} answers any mix of requests (builds, reads, sizing, hashes) from one JVM.
 * The wire protocol is documented at the top of GuavaHarness.java.
 *
 * Typical use in a test file:
 *   const hasJava = requireJava();
 *   describe.skipIf(!hasJava)('guava parity', () => { ... guavaBuild({...}) ... });
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

/** Funnels the harness understands (Guava `Funnels.*`). */
export type GuavaFunnel = 'string' | 'utf16' | 'int' | 'long' | 'bytes';

/** `BloomFilterStrategies` constants: MITZ_64 is Guava's default; MITZ_32 is reached by reflection. */
export type GuavaStrategy = 'MURMUR128_MITZ_64' | 'MURMUR128_MITZ_32';

/** Any key the harness can transport. */
export type GuavaKey = string | Uint8Array | number | bigint;

/**
 * The key type each funnel takes: `string` for string (UTF-8) and utf16 (unencoded chars),
 * int32 `number` for int, `bigint` or safe-integer `number` for long, and `Uint8Array` for bytes.
 */
export type GuavaKeyFor<F extends GuavaFunnel> = F extends 'string' | 'utf16'
  ? string
  : F extends 'int'
    ? number
    : F extends 'long'
      ? bigint | number
      : Uint8Array;

/** Input for {@link guavaBuild}: `BloomFilter.create(funnel, n, fpp[, strategy])`, then put and probe. */
export interface GuavaBuildRequest<F extends GuavaFunnel = GuavaFunnel> {
  funnel: F;
  /** expectedInsertions (a Java long). */
  n: number | bigint;
  fpp: number;
  /** Defaults to MURMUR128_MITZ_64 (the public `create`). */
  strategy?: GuavaStrategy;
  /** Keys passed to `put`, in order. */
  inserts: readonly GuavaKeyFor<F>[];
  /** Keys passed to `mightContain` after all inserts. Defaults to none. */
  probes?: readonly GuavaKeyFor<F>[];
}

/** Result of {@link guavaBuild}. */
export interface GuavaBuildResult {
  /** `writeTo` output: strategy ordinal, k, word count N (BE int32), then N BE int64 words. */
  bytes: Uint8Array;
  /** Return value of each `put`, in insert order. */
  putResults: boolean[];
  /** `mightContain` for each probe, in probe order. */
  probeResults: boolean[];
  /** `approximateElementCount()`. */
  approxCount: number;
  /** `expectedFpp()`, transported bit-exactly. */
  expectedFpp: number;
}

/**
 * Input for {@link guavaRead}: `BloomFilter.readFrom(bytes, funnel)`, then probe. In a
 * {@link GuavaBatch}, `probes: 'previous-build'` probes with the keys of the batch's previous build
 * request (sent to the JVM once).
 */
export interface GuavaReadRequest<F extends GuavaFunnel = GuavaFunnel> {
  bytes: Uint8Array;
  funnel: F;
  probes?: readonly GuavaKeyFor<F>[] | 'previous-build';
}

/** Result of {@link guavaRead}. `error` is "<class>: <message> | cause: <class>: <message>". */
export type GuavaReadResult =
  | { ok: true; probeResults: boolean[]; approxCount: number; expectedFpp: number }
  | { ok: false; error: string };

/** One (expectedInsertions, fpp) pair for {@link guavaSizing}. Tuples are accepted too. */
export type GuavaSizingPair = { n: number; fpp: number } | readonly [n: number, fpp: number];

/** One pair Guava refused to size, in a {@link GuavaBatch} sizing answer. */
export interface GuavaSizingError {
  n: number;
  fpp: number;
  /** Guava's exception, "<class>: <message> | cause: ...". */
  error: string;
}

/** Result of {@link guavaSizing}. */
export interface GuavaSizing {
  n: number;
  fpp: number;
  /** 64 × N, where N is the word count in the writeTo header. This is the modulus for bit indexes. */
  bitSize: number;
  /** numHashFunctions. */
  k: number;
  /**
   * 'create' = read from a real filter's header. 'formula' = the filter was over 2^30 bits, so
   * Guava's own optimalNumOf* functions were called reflectively instead of allocating it.
   */
  source: 'create' | 'formula';
}

/** `Hashing.murmur3_128()` of a funnelled key: the two 64-bit halves as unsigned bigints (h1 = asLong()). */
export interface GuavaHash {
  h1: bigint;
  h2: bigint;
}

/** Result of {@link javaAvailable}. */
export type JavaAvailability = { ok: true } | { ok: false; reason: string };

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SOURCE = path.resolve(HERE, '../java/GuavaHarness.java');
const REPO_CACHE = path.resolve(HERE, '../.java-build');
const DEFAULT_GUAVA_JAR = '/usr/share/java/guava.jar';
const INSTALL_HINT =
  'Install a JDK and Guava, e.g. `sudo apt-get install default-jdk-headless libguava-java` ' +
  '(or point GUAVA_JAR at a guava-31.1-jre.jar).';
/** JVM flags: no parallel GC threads. */
const JVM_FLAGS = ['-XX:+UseSerialGC', '-Xss4m'];
/**
 * Requests shorter than this run on the client compiler alone (faster start-up); longer ones get
 * the optimizing compiler too, which halves the JVM's CPU time on a 100 MB request.
 */
const SHORT_REQUEST = 1 << 20;
const MAX_BUFFER = 1 << 30;

let availabilityCache: JavaAvailability | undefined;
let javacVersionCache = '';
let classDirCache: string | undefined;
let hintPrinted = false;

/** The Guava jar in use: $GUAVA_JAR, else Debian's /usr/share/java/guava.jar. */
function guavaJar(): string {
  return process.env.GUAVA_JAR || DEFAULT_GUAVA_JAR;
}

/**
 * The runtime classpath for Guava. It is the jar plus failureaccess.jar when that sits next to it.
 * Debian's guava.jar already bundles failureaccess, and the hash/BloomFilter classes don't use it.
 */
export function guavaClasspath(): string {
  const jar = guavaJar();
  const parts = [jar];
  const failureAccess = path.join(path.dirname(jar), 'failureaccess.jar');
  if (fs.existsSync(failureAccess)) parts.push(failureAccess);
  return parts.join(path.delimiter);
}

/**
 * Finds `cmd` on PATH without running it (starting a JVM only to print its version costs about
 * half a second of CPU per tool and process); its `banner` names the resolved file (symlinks
 * followed: the JDK's own directory), its size and time, so a JDK upgrade changes it.
 */
function probeTool(cmd: string): { ok: true; banner: string } | { ok: false; reason: string } {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir === '') continue;
    try {
      const file = path.join(dir, cmd);
      fs.accessSync(file, fs.constants.X_OK);
      const real = fs.realpathSync(file);
      const st = fs.statSync(real);
      if (st.isFile()) return { ok: true, banner: `${real} ${st.size} ${st.mtimeMs}` };
    } catch {
      // not in this directory
    }
  }
  return { ok: false, reason: `\`${cmd}\` not found on PATH` };
}

/**
 * Checks that `java` and `javac` are on PATH and that the Guava jar exists. The result is
 * cached for the process. It does not compile anything.
 */
export function javaAvailable(): JavaAvailability {
  if (availabilityCache) return availabilityCache;
  const java = probeTool('java');
  const javac = java.ok ? probeTool('javac') : java;
  const jar = guavaJar();
  if (!java.ok) availabilityCache = { ok: false, reason: java.reason };
  else if (!javac.ok) availabilityCache = { ok: false, reason: javac.reason };
  else if (!fs.existsSync(jar))
    availabilityCache = { ok: false, reason: `Guava jar not found at ${jar}` };
  else {
    javacVersionCache = javac.banner;
    availabilityCache = { ok: true };
  }
  return availabilityCache;
}

/** True when the CI environment variable is set (any value except '', '0' and 'false'). */
function inCi(): boolean {
  const ci = process.env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

/**
 * Decides whether Guava parity tests can run. Returns true when Java and Guava are present. In
 * CI ($CI set) a missing toolchain throws, so the suite fails instead of silently skipping.
 * Locally it returns false (skip the tests) and prints the install hint once per process.
 */
export function requireJava(): boolean {
  const a = javaAvailable();
  if (a.ok) return true;
  if (inCi()) {
    throw new Error(
      `Java 17+ and Guava 31.1 are required in CI for the Guava parity tests: ${a.reason}. ${INSTALL_HINT}`,
    );
  }
  if (!hintPrinted) {
    hintPrinted = true;
    console.warn(`[bloomkit] Skipping Guava parity tests: ${a.reason}. ${INSTALL_HINT}`);
  }
  return false;
}

/** Picks a writable cache root: test/.java-build, or a directory under os.tmpdir(). */
function cacheRoot(): string {
  for (const dir of [REPO_CACHE, path.join(os.tmpdir(), 'bloomkit-java-build')]) {
    try {
      fs.mkdirSync(dir, { recursive: true });
      fs.accessSync(dir, fs.constants.W_OK);
      return dir;
    } catch {
      // try the next candidate
    }
  }
  throw new Error('No writable directory for the compiled Guava harness');
}

/**
 * Compiles GuavaHarness.java (once per process and per source version) and returns the class
 * directory. Safe with parallel workers: it compiles into a private temp dir and then renames it
 * into place. Whoever loses the rename race just uses the winner's identical output. Throws if
 * Java is unavailable or compilation fails.
 */
export function ensureHarnessCompiled(): string {
  if (classDirCache) return classDirCache;
  const a = javaAvailable();
  if (!a.ok) throw new Error(`Cannot run the Guava harness: ${a.reason}. ${INSTALL_HINT}`);
  const source = fs.readFileSync(SOURCE);
  const key = createHash('sha256')
    .update(source)
    .update('\0')
    .update(guavaClasspath())
    .update('\0')
    .update(javacVersionCache)
    .digest('hex')
    .slice(0, 16);
  const root = cacheRoot();
  const finalDir = path.join(root, `harness-${key}`);
  const marker = path.join(finalDir, 'GuavaHarness.class');
  if (!fs.existsSync(marker)) {
    const tmp = fs.mkdtempSync(path.join(root, `tmp-${process.pid}-`));
    try {
      const r = spawnSync(
        'javac',
        // javac on the JVM's quick settings (C1 only, serial GC), as the short harness runs:
        // the same class file for 1.6 s of CPU instead of 3.0 s.
        [
          '-J-XX:+UseSerialGC',
          '-J-XX:TieredStopAtLevel=1',
          '-encoding',
          'UTF-8',
          '-nowarn',
          '-cp',
          guavaClasspath(),
          '-d',
          tmp,
          SOURCE,
        ],
        { encoding: 'utf8' },
      );
      if (r.error || r.status !== 0) {
        throw new Error(
          `javac failed for ${SOURCE} (status ${r.status}): ${r.error?.message ?? ''}\n${r.stderr}${r.stdout}`,
        );
      }
      try {
        fs.renameSync(tmp, finalDir);
      } catch (e) {
        // Another worker won the race (ENOTEMPTY/EEXIST/EPERM); its output is identical.
        if (!fs.existsSync(marker)) throw e;
      }
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
    }
  }
  classDirCache = finalDir;
  return finalDir;
}

/** The java command line for a request stream of `length` bytes. */
function harnessArgs(length: number): string[] {
  const classDir = ensureHarnessCompiled();
  const cp = [classDir, guavaClasspath()].join(path.delimiter);
  const flags = length < SHORT_REQUEST ? [...JVM_FLAGS, '-XX:TieredStopAtLevel=1'] : JVM_FLAGS;
  return [...flags, '-cp', cp, 'GuavaHarness'];
}

/** Splits the harness's output into response groups (at each "end" line). */
function splitGroups(stdout: string): string[][] {
  const groups: string[][] = [];
  let current: string[] = [];
  for (const line of stdout.split('\n')) {
    if (line === 'end') {
      groups.push(current);
      current = [];
    } else if (line !== '') {
      current.push(line);
    }
  }
  return groups;
}

/** Runs the harness on a complete request stream and returns the response groups (split at "end"). */
function runHarness(input: Uint8Array): string[][] {
  const r = spawnSync('java', harnessArgs(input.length), {
    input,
    encoding: 'utf8',
    maxBuffer: MAX_BUFFER,
  });
  if (r.error) throw new Error(`Guava harness failed to run: ${r.error.message}`);
  if (r.status !== 0) {
    throw new Error(
      `Guava harness exited with status ${r.status} (signal ${r.signal}): ${r.stderr}`,
    );
  }
  return splitGroups(r.stdout);
}

/**
 * {@link runHarness} without blocking the event loop while the JVM works (a test worker blocked
 * for seconds cannot report to vitest).
 */
function runHarnessAsync(input: Uint8Array): Promise<string[][]> {
  return new Promise((resolve, reject) => {
    const child = spawn('java', harnessArgs(input.length), { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', (e) => reject(new Error(`Guava harness failed to run: ${e.message}`)));
    child.on('close', (status, signal) => {
      if (status !== 0) {
        const stderr = Buffer.concat(err).toString('utf8');
        reject(
          new Error(`Guava harness exited with status ${status} (signal ${signal}): ${stderr}`),
        );
      } else {
        resolve(splitGroups(Buffer.concat(out).toString('utf8')));
      }
    });
    // EPIPE if the JVM dies early: its exit status tells why.
    child.stdin.on('error', () => undefined);
    child.stdin.end(input);
  });
}

// ------------------------------------------------------------------ encoding

const HEX_CODES = Uint8Array.from('0123456789abcdef', (c) => c.charCodeAt(0));
/** A non-empty string of printable ASCII (0x20-0x7e): sent as itself after '"'. */
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Parses the harness's lowercase, even-length hex into a fresh Uint8Array. */
function hexToBytes(hex: string): Uint8Array {
  if (!/^(?:[0-9a-f]{2})*$/.test(hex)) throw new Error('malformed hex from Guava harness');
  return new Uint8Array(Buffer.from(hex, 'hex'));
}

/**
 * Builds the ASCII request stream in a growable byte buffer. For 100k+ keys this is several
 * times faster than concatenating and joining strings.
 */
class RequestWriter {
  private buf = Buffer.allocUnsafe(1 << 20);
  private pos = 0;

  /** Makes room for `n` more bytes. */
  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** Appends an ASCII string and a newline. */
  line(s: string): void {
    this.reserve(s.length + 1);
    this.pos += this.buf.write(s, this.pos, 'latin1');
    this.buf[this.pos++] = 10;
  }

  /** Appends the bytes as lowercase hex (two digits each) and a newline. */
  hexLine(bytes: Uint8Array): void {
    this.reserve(2 * bytes.length + 1);
    const hex = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('hex');
    this.pos += this.buf.write(hex, this.pos, 'latin1');
    this.buf[this.pos++] = 10;
  }

  /**
   * Appends a string key and a newline: '"' and the key itself when it is non-empty printable ASCII,
   * else each UTF-16 code unit as 4 hex digits (lossless for lone surrogates).
   */
  utf16Line(s: string): void {
    this.reserve(4 * s.length + 1);
    const buf = this.buf;
    let pos = this.pos;
    if (PRINTABLE_ASCII.test(s)) {
      buf[pos++] = 0x22;
      pos += buf.write(s, pos, 'latin1');
      buf[pos++] = 10;
      this.pos = pos;
      return;
    }
    for (let i = 0; i < s.length; i++) {
      const c = s.charCodeAt(i);
      buf[pos++] = HEX_CODES[c >>> 12]!;
      buf[pos++] = HEX_CODES[(c >>> 8) & 15]!;
      buf[pos++] = HEX_CODES[(c >>> 4) & 15]!;
      buf[pos++] = HEX_CODES[c & 15]!;
    }
    buf[pos++] = 10;
    this.pos = pos;
  }

  /**
   * Appends a key block: the count line, then one line per key. When `prefix` is given, the
   * leading keys equal to `prefix`'s are not sent again (count line "C P"). Throws a TypeError on
   * a key that doesn't match `funnel`.
   */
  keys(funnel: GuavaFunnel, keys: readonly GuavaKey[], prefix?: readonly GuavaKey[]): void {
    let reused = 0;
    if (prefix) {
      const max = Math.min(keys.length, prefix.length);
      while (reused < max && keys[reused] === prefix[reused]) reused++;
    }
    this.line(reused > 0 ? `${keys.length} ${reused}` : String(keys.length));
    for (let i = reused; i < keys.length; i++) this.key(funnel, keys[i]!);
  }

  /** Appends one key line. */
  private key(funnel: GuavaFunnel, key: GuavaKey): void {
    switch (funnel) {
      case 'string':
      case 'utf16':
        if (typeof key !== 'string') {
          throw new TypeError(`${funnel} funnel needs string keys, got ${typeof key}`);
        }
        this.utf16Line(key);
        return;
      case 'int':
        if (
          typeof key !== 'number' ||
          !Number.isInteger(key) ||
          key < INT32_MIN ||
          key > INT32_MAX
        ) {
          throw new TypeError(`int funnel needs int32 numbers, got ${String(key)}`);
        }
        this.line(String(key));
        return;
      case 'long': {
        let v: bigint;
        if (typeof key === 'bigint') v = key;
        else if (typeof key === 'number' && Number.isSafeInteger(key)) v = BigInt(key);
        else
          throw new TypeError(`long funnel needs bigint or safe-integer keys, got ${String(key)}`);
        if (v < INT64_MIN || v > INT64_MAX)
          throw new TypeError(`long key out of int64 range: ${v}`);
        this.line(v.toString());
        return;
      }
      case 'bytes':
        if (!(key instanceof Uint8Array)) throw new TypeError('bytes funnel needs Uint8Array keys');
        this.hexLine(key);
        return;
      default:
        throw new TypeError(`unknown funnel: ${String(funnel)}`);
    }
  }

  /** The finished request stream. */
  finish(): Uint8Array {
    return this.buf.subarray(0, this.pos);
  }
}

/** Formats a Java long parameter; rejects non-integers. */
function formatLong(v: number | bigint, what: string): string {
  if (typeof v === 'bigint') return v.toString();
  if (!Number.isSafeInteger(v)) throw new TypeError(`${what} must be a safe integer, got ${v}`);
  return String(v);
}

/** Formats a double so Java's Double.parseDouble reads back the same value (including NaN/±Infinity). */
function formatDouble(v: number): string {
  return String(v);
}

// ------------------------------------------------------------------ decoding

/** Splits a response group into name → value (the text after the first space). */
function fields(group: readonly string[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const line of group) {
    const sp = line.indexOf(' ');
    m.set(sp < 0 ? line : line.slice(0, sp), sp < 0 ? '' : line.slice(sp + 1));
  }
  return m;
}

/** Reads a required field. */
function field(m: Map<string, string>, name: string): string {
  const v = m.get(name);
  if (v === undefined) throw new Error(`Guava harness response lacks '${name}'`);
  return v;
}

/** '0'/'1' string → booleans. */
function bits(s: string): boolean[] {
  const out = new Array<boolean>(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) === 49;
  return out;
}

/** The first token of "<16 hex raw bits> <decimal>" → the exact double. */
function doubleFromBits(s: string): number {
  const hex = s.split(' ')[0] ?? '';
  const view = new DataView(new ArrayBuffer(8));
  view.setBigUint64(0, BigInt(`0x${hex}`));
  return view.getFloat64(0);
}

/** Decodes probe/approx/fpp fields shared by build and read responses. */
function stats(m: Map<string, string>): {
  probeResults: boolean[];
  approxCount: number;
  expectedFpp: number;
} {
  return {
    probeResults: bits(field(m, 'probe')),
    approxCount: Number(field(m, 'approx')),
    expectedFpp: doubleFromBits(field(m, 'fpp')),
  };
}

/** Returns the response groups, checking that there is exactly one group per request. */
function expectGroups(groups: string[][], count: number): string[][] {
  if (groups.length !== count) {
    throw new Error(`Guava harness returned ${groups.length} responses for ${count} requests`);
  }
  return groups;
}

// ------------------------------------------------------------------ batches

/** Decodes one build response; throws if Guava's create() threw. */
function decodeBuild(group: readonly string[]): GuavaBuildResult {
  const m = fields(group);
  const err = m.get('error');
  if (err !== undefined) throw new Error(`Guava BloomFilter.create threw: ${err}`);
  return {
    bytes: hexToBytes(field(m, 'bytes')),
    putResults: bits(field(m, 'put')),
    ...stats(m),
  };
}

/** Decodes one read response. */
function decodeRead(group: readonly string[]): GuavaReadResult {
  const m = fields(group);
  const err = m.get('error');
  if (err !== undefined) return { ok: false, error: err };
  return { ok: true, ...stats(m) };
}

/**
 * Any mix of requests answered by one JVM: queue them (each call returns a function that gives
 * its answer once the batch has run), then {@link GuavaBatch.run}. A JVM start costs far more than
 * most requests, so a test file that asks Guava many questions asks them all at once.
 *
 *   const batch = new GuavaBatch();
 *   const built = batch.build({ funnel: 'int', n: 100, fpp: 0.01, inserts: [1, 2] });
 *   const read = batch.read({ bytes, funnel: 'int', probes: 'previous-build' });
 *   batch.run();
 *   built().bytes; read().ok;
 */
export class GuavaBatch {
  private readonly writer = new RequestWriter();
  private count = 0;
  private built = false;
  private groups: string[][] | undefined;

  /** Queues a request; the getter decodes (once) from the run's response groups. */
  private queue<T>(decode: (group: readonly string[]) => T): () => T {
    const index = this.count++;
    let done = false;
    let value: T | undefined;
    return () => {
      if (this.groups === undefined) throw new Error('GuavaBatch: run() the batch first');
      if (!done) {
        value = decode(this.groups[index]!);
        done = true;
      }
      return value as T;
    };
  }

  /** `create` + put + mightContain (see {@link guavaBuild}); the getter throws if create() threw. */
  build<F extends GuavaFunnel>(req: GuavaBuildRequest<F>): () => GuavaBuildResult {
    const strategy = req.strategy ?? 'MURMUR128_MITZ_64';
    const w = this.writer;
    w.line(`build ${req.funnel} ${formatLong(req.n, 'n')} ${formatDouble(req.fpp)} ${strategy}`);
    w.keys(req.funnel, req.inserts);
    w.keys(req.funnel, req.probes ?? [], req.inserts);
    this.built = true;
    return this.queue(decodeBuild);
  }

  /** `readFrom` + mightContain (see {@link guavaRead}). */
  read<F extends GuavaFunnel>(req: GuavaReadRequest<F>): () => GuavaReadResult {
    const w = this.writer;
    w.line(`read ${req.funnel}`);
    w.hexLine(req.bytes);
    if (req.probes === 'previous-build') {
      if (!this.built) throw new Error("GuavaBatch: 'previous-build' probes need a build before");
      w.line('same');
    } else {
      w.keys(req.funnel, req.probes ?? []);
    }
    return this.queue(decodeRead);
  }

  /** Sizes each pair (see {@link guavaSizing}); a pair Guava refuses answers with its error. */
  sizing(pairs: readonly GuavaSizingPair[]): () => (GuavaSizing | GuavaSizingError)[] {
    const norm = pairs.map((p) => ('n' in p ? { n: p.n, fpp: p.fpp } : { n: p[0], fpp: p[1] }));
    const w = this.writer;
    w.line('sizing');
    w.line(String(norm.length));
    for (const { n, fpp } of norm) w.line(`${formatLong(n, 'n')} ${formatDouble(fpp)}`);
    return this.queue((group) => {
      if (group.length !== norm.length) {
        throw new Error('Guava harness sizing answer has the wrong length');
      }
      return norm.map(({ n, fpp }, i): GuavaSizing | GuavaSizingError => {
        const line = group[i]!;
        if (line.startsWith('error ')) return { n, fpp, error: line.slice(6) };
        const [bitSize, k, source] = line.split(' ');
        return {
          n,
          fpp,
          bitSize: Number(bitSize),
          k: Number(k),
          source: source === 'formula' ? 'formula' : 'create',
        };
      });
    });
  }

  /** `Hashing.murmur3_128().hashObject(key, funnel)` for each key (see {@link guavaHash}). */
  hash<F extends GuavaFunnel>(funnel: F, keys: readonly GuavaKeyFor<F>[]): () => GuavaHash[] {
    const w = this.writer;
    w.line(`hash ${funnel}`);
    w.keys(funnel, keys);
    return this.queue((group) => {
      if (group.length !== keys.length) {
        throw new Error('Guava harness hash answer has the wrong length');
      }
      return group.map((line) => {
        const [h1, h2] = line.split(' ');
        return { h1: BigInt(`0x${h1}`), h2: BigInt(`0x${h2}`) };
      });
    });
  }

  /** Runs every queued request in one JVM. A batch runs once. */
  run(): void {
    if (this.groups !== undefined) throw new Error('GuavaBatch: a batch runs once');
    this.groups = expectGroups(runHarness(this.writer.finish()), this.count);
  }

  /** {@link GuavaBatch.run} without blocking the event loop while the JVM works. */
  async runAsync(): Promise<void> {
    if (this.groups !== undefined) throw new Error('GuavaBatch: a batch runs once');
    const groups = await runHarnessAsync(this.writer.finish());
    this.groups = expectGroups(groups, this.count);
  }
}

// ------------------------------------------------------------------ one-call wrappers

/**
 * Builds a real Guava filter: `BloomFilter.create(funnel, n, fpp[, strategy])`, then `put` for
 * each insert and `mightContain` for each probe. Returns writeTo bytes, put results, probe
 * results, approximateElementCount and expectedFpp. Throws if create() rejects the parameters.
 * The Error message carries Guava's exception.
 */
export function guavaBuild<F extends GuavaFunnel>(req: GuavaBuildRequest<F>): GuavaBuildResult {
  return guavaBuildMany([req])[0]!;
}

/** Like {@link guavaBuild} for many filters, all answered by a single JVM. */
export function guavaBuildMany(reqs: readonly GuavaBuildRequest[]): GuavaBuildResult[] {
  const batch = new GuavaBatch();
  const answers = reqs.map((req) => batch.build(req));
  batch.run();
  return answers.map((answer) => answer());
}

/**
 * Deserialises `bytes` with `BloomFilter.readFrom(in, funnel)` and probes it. If readFrom throws,
 * the result is `{ ok: false, error }`, where error is "<class>: <message>" plus any
 * " | cause: <class>: <message>" parts.
 */
export function guavaRead<F extends GuavaFunnel>(req: GuavaReadRequest<F>): GuavaReadResult {
  return guavaReadMany([req])[0]!;
}

/** Like {@link guavaRead} for many inputs, all answered by a single JVM. */
export function guavaReadMany(reqs: readonly GuavaReadRequest[]): GuavaReadResult[] {
  const batch = new GuavaBatch();
  const answers = reqs.map((req) => batch.read(req));
  batch.run();
  return answers.map((answer) => answer());
}

/** Throws on a sizing answer Guava refused. */
export function sizedOrThrow(answer: GuavaSizing | GuavaSizingError): GuavaSizing {
  if ('error' in answer) {
    throw new Error(`Guava rejected sizing (n=${answer.n}, fpp=${answer.fpp}): ${answer.error}`);
  }
  return answer;
}

/**
 * Asks Guava for the size of a fresh `create(integerFunnel, n, fpp)` filter: bitSize = 64 × N
 * from the writeTo header, and k. Throws if Guava rejects any pair, for example n < 0, or fpp
 * ∉ (0, 1), or k > 255.
 */
export function guavaSizing(pairs: readonly GuavaSizingPair[]): GuavaSizing[] {
  const batch = new GuavaBatch();
  const answer = batch.sizing(pairs);
  batch.run();
  return answer().map(sizedOrThrow);
}

/**
 * `Hashing.murmur3_128().hashObject(key, funnel)` for each key. Returns h1 and h2 as unsigned
 * 64-bit bigints: the little-endian halves of HashCode.asBytes(), so h1 equals asLong().
 */
export function guavaHash<F extends GuavaFunnel>(
  funnel: F,
  keys: readonly GuavaKeyFor<F>[],
): GuavaHash[] {
  const batch = new GuavaBatch();
  const answer = batch.hash(funnel, keys);
  batch.run();
  return answer();
}
