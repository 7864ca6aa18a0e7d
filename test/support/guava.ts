/**
 * Test-only bridge to real Guava 31.1 through test/java/GuavaHarness.java.
 *
 * The harness is compiled once per process into test/.java-build/<hash>/ (falling back to
 * os.tmpdir() if the repo is read-only). The cache key hashes the Java source, the classpath and
 * the javac version, so editing the source recompiles it. Every wrapper runs one short-lived JVM
 * (about 0.1-0.3 s of CPU to start). The `...Many` variants answer a whole batch from one JVM, and
 * {@link GuavaBatch} answers any mix of requests (builds, reads, sizing, hashes) from one JVM,
 * also as a stream for millions of keys. The wire protocol (binary: keys go as their bytes) is
 * documented at the top of GuavaHarness.java.
 *
 * Typical use in a test file:
 *   const hasJava = requireJava();
 *   describe.skipIf(!hasJava)('guava parity', () => { ... guavaBuild({...}) ... });
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
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
  /** Return value of each `put`, in insert order (made from `putBits` when first read). */
  putResults: boolean[];
  /** The same answers, one byte each (1 = true): no array of millions of booleans to build. */
  putBits: Uint8Array;
  /** `mightContain` for each probe, in probe order (made from `probeBits` when first read). */
  probeResults: boolean[];
  /** The same answers, one byte each (1 = true). */
  probeBits: Uint8Array;
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
  | {
      ok: true;
      /** As in {@link GuavaBuildResult}. */
      probeResults: boolean[];
      probeBits: Uint8Array;
      approxCount: number;
      expectedFpp: number;
    }
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
 * Requests shorter than this run on the client compiler alone (faster start-up); longer ones (and
 * streaming batches) get the optimizing compiler too, which takes a fifth off the JVM's CPU time
 * on the interop test's 75 MB request (2.6 s against 3.4 s, mean of five runs each).
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

/** Runs the harness on a complete request stream and returns its response stream. */
function runHarness(input: Uint8Array): Buffer {
  const r = spawnSync('java', harnessArgs(input.length), { input, maxBuffer: MAX_BUFFER });
  if (r.error) throw new Error(`Guava harness failed to run: ${r.error.message}`);
  if (r.status !== 0) {
    throw new Error(
      `Guava harness exited with status ${r.status} (signal ${r.signal}): ${r.stderr.toString('utf8')}`,
    );
  }
  return r.stdout;
}

/**
 * A running harness that takes its request stream in parts ({@link Harness.send}) and gives its
 * response stream once the requests have ended ({@link Harness.end}), without blocking the event
 * loop while the JVM works (a test worker blocked for seconds cannot report to vitest).
 */
class Harness {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly done: Promise<Buffer>;

  constructor(length: number) {
    this.child = spawn('java', harnessArgs(length), { stdio: ['pipe', 'pipe', 'pipe'] });
    const child = this.child;
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    // EPIPE if the JVM dies early: its exit status tells why.
    child.stdin.on('error', () => undefined);
    this.done = new Promise((resolve, reject) => {
      child.on('error', (e) => reject(new Error(`Guava harness failed to run: ${e.message}`)));
      child.on('close', (status, signal) => {
        if (status !== 0) {
          const stderr = Buffer.concat(err).toString('utf8');
          reject(
            new Error(`Guava harness exited with status ${status} (signal ${signal}): ${stderr}`),
          );
        } else {
          resolve(Buffer.concat(out));
        }
      });
    });
    // A JVM that fails while requests are still being sent is reported by `end`, not before.
    this.done.catch(() => undefined);
  }

  /** Writes the parts; resolves once the JVM has taken them all (their memory may be reused). */
  send(parts: readonly Uint8Array[]): Promise<void> {
    return new Promise((resolve) => {
      if (parts.length === 0) resolve();
      parts.forEach((part, i) => {
        // After an error (the JVM gone) too: `end` reports why.
        this.child.stdin.write(part, () => {
          if (i === parts.length - 1) resolve();
        });
      });
    });
  }

  /** Ends the request stream; resolves to the whole response stream. */
  end(): Promise<Buffer> {
    this.child.stdin.end();
    return this.done;
  }
}

// ------------------------------------------------------------------ encoding

/** The harness's opcodes and funnel and strategy numbers (see GuavaHarness.java). */
const OP = { build: 1, read: 2, sizing: 3, hash: 4 } as const;
const FUNNEL_IDS: Record<GuavaFunnel, number> = { string: 0, utf16: 1, int: 2, long: 3, bytes: 4 };
const STRATEGY_IDS: Record<GuavaStrategy, number> = { MURMUR128_MITZ_32: 0, MURMUR128_MITZ_64: 1 };
const INT32_MIN = -(2 ** 31);
const INT32_MAX = 2 ** 31 - 1;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
/** The size of a buffer of the request stream (a larger write gets a buffer of its own). */
const CHUNK = 1 << 20;

/** Checks a Java long parameter; rejects non-integers. */
function checkLong(v: number | bigint, what: string): number | bigint {
  if (typeof v === 'number' && !Number.isSafeInteger(v)) {
    throw new TypeError(`${what} must be a safe integer, got ${v}`);
  }
  return v;
}

/**
 * Builds the binary request stream (little-endian) in buffers of {@link CHUNK} bytes, so that it
 * grows without copying what it holds. {@link RequestWriter.take} hands out what was written, and
 * {@link RequestWriter.recycle} takes the buffers back once they were sent: a stream sent as it is
 * written reuses a few buffers (memory touched for the first time costs more than writing it: on
 * the test machine 0.2 s of CPU for a fresh 50 MB, 5 ms to write it again).
 */
class RequestWriter {
  /** Written parts, each a view of the start of its buffer. */
  private parts: Buffer[] = [];
  /** Buffers to reuse. */
  private readonly pool: Buffer[] = [];
  private buf: Buffer = Buffer.alloc(0);
  private view = new DataView(this.buf.buffer);
  private pos = 0;
  /** Bytes handed out or in full buffers (see {@link RequestWriter.size}). */
  private length = 0;

  /** Bytes written so far. */
  get size(): number {
    return this.length + this.pos;
  }

  /** Makes room for `n` more bytes in the current buffer. */
  private reserve(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    if (this.pos > 0) this.parts.push(this.buf.subarray(0, this.pos));
    this.length += this.pos;
    this.buf = (n <= CHUNK && this.pool.pop()) || Buffer.allocUnsafeSlow(Math.max(n, CHUNK));
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.length);
    this.pos = 0;
  }

  u8(v: number): void {
    this.reserve(1);
    this.buf[this.pos++] = v;
  }

  i32(v: number): void {
    this.reserve(4);
    this.view.setInt32(this.pos, v, true);
    this.pos += 4;
  }

  i64(v: number | bigint): void {
    this.reserve(8);
    if (typeof v === 'bigint') {
      this.view.setBigInt64(this.pos, v, true);
    } else {
      // ToUint32 takes v modulo 2^32 exactly; the quotient of a safe integer fits an int32.
      this.view.setUint32(this.pos, v >>> 0, true);
      this.view.setInt32(this.pos + 4, Math.floor(v / 2 ** 32), true);
    }
    this.pos += 8;
  }

  f64(v: number): void {
    this.reserve(8);
    this.view.setFloat64(this.pos, v, true);
    this.pos += 8;
  }

  /** The bytes alone. */
  raw(bytes: Uint8Array): void {
    this.reserve(bytes.length);
    this.buf.set(bytes, this.pos);
    this.pos += bytes.length;
  }

  /** An i32 length, then the bytes. */
  block(bytes: Uint8Array): void {
    this.i32(bytes.length);
    this.raw(bytes);
  }

  /** String keys: their lengths, then their code units (lossless: lone surrogates too). */
  private strings(funnel: GuavaFunnel, keys: readonly GuavaKey[], from: number): void {
    for (let i = from; i < keys.length; i++) {
      const key = keys[i];
      if (typeof key !== 'string') {
        throw new TypeError(`${funnel} funnel needs string keys, got ${typeof key}`);
      }
      this.i32(key.length);
    }
    for (let i = from; i < keys.length; i++) {
      const key = keys[i] as string;
      this.reserve(2 * key.length);
      this.pos += this.buf.write(key, this.pos, 'utf16le');
    }
  }

  /**
   * Appends a key block. When `prefix` is given, the leading keys equal to `prefix`'s are not sent
   * again. Throws a TypeError on a key that doesn't match `funnel`.
   */
  keys(funnel: GuavaFunnel, keys: readonly GuavaKey[], prefix?: readonly GuavaKey[]): void {
    let reused = 0;
    if (prefix) {
      const max = Math.min(keys.length, prefix.length);
      while (reused < max && keys[reused] === prefix[reused]) reused++;
    }
    this.i32(keys.length);
    this.i32(reused);
    switch (funnel) {
      case 'string':
      case 'utf16':
        this.strings(funnel, keys, reused);
        return;
      case 'int':
        for (let i = reused; i < keys.length; i++) {
          const key = keys[i];
          if (
            typeof key !== 'number' ||
            !Number.isInteger(key) ||
            key < INT32_MIN ||
            key > INT32_MAX
          ) {
            throw new TypeError(`int funnel needs int32 numbers, got ${String(key)}`);
          }
          this.i32(key);
        }
        return;
      case 'long':
        for (let i = reused; i < keys.length; i++) {
          const key = keys[i];
          if (typeof key === 'bigint') {
            if (key < INT64_MIN || key > INT64_MAX) {
              throw new TypeError(`long key out of int64 range: ${key}`);
            }
          } else if (typeof key !== 'number' || !Number.isSafeInteger(key)) {
            throw new TypeError(
              `long funnel needs bigint or safe-integer keys, got ${String(key)}`,
            );
          }
          this.i64(key);
        }
        return;
      case 'bytes':
        for (let i = reused; i < keys.length; i++) {
          const key = keys[i];
          if (!(key instanceof Uint8Array)) {
            throw new TypeError('bytes funnel needs Uint8Array keys');
          }
          this.i32(key.length);
        }
        for (let i = reused; i < keys.length; i++) this.raw(keys[i] as Uint8Array);
        return;
      default:
        throw new TypeError(`unknown funnel: ${String(funnel)}`);
    }
  }

  /** Hands out everything written since the last call. */
  take(): Buffer[] {
    const parts = this.parts;
    if (this.pos > 0) parts.push(this.buf.subarray(0, this.pos));
    this.length += this.pos;
    this.parts = [];
    this.buf = Buffer.alloc(0);
    this.pos = 0;
    return parts;
  }

  /** Takes back the buffers of parts that have been sent. */
  recycle(parts: readonly Buffer[]): void {
    for (const part of parts) {
      if (part.buffer.byteLength === CHUNK) this.pool.push(Buffer.from(part.buffer, 0, CHUNK));
    }
  }
}

// ------------------------------------------------------------------ decoding

/** Reads the harness's little-endian response stream in order. */
class ResponseReader {
  pos = 0;
  constructor(private readonly buf: Buffer) {}

  /** Throws unless `n` more bytes are there. */
  private need(n: number): void {
    if (this.pos + n > this.buf.length) throw new Error('Guava harness response is truncated');
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++]!;
  }

  i32(): number {
    this.need(4);
    const v = this.buf.readInt32LE(this.pos);
    this.pos += 4;
    return v;
  }

  /** An i64 that fits a double exactly (counts, bit sizes). */
  i64(): number {
    this.need(8);
    const v = this.buf.readUInt32LE(this.pos) + this.buf.readInt32LE(this.pos + 4) * 2 ** 32;
    this.pos += 8;
    return v;
  }

  f64(): number {
    this.need(8);
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  u64(): bigint {
    this.need(8);
    const v = this.buf.readBigUInt64LE(this.pos);
    this.pos += 8;
    return v;
  }

  /** An i32 length and the bytes, copied. */
  block(): Uint8Array {
    const n = this.i32();
    this.need(n);
    const b = new Uint8Array(this.buf.subarray(this.pos, this.pos + n));
    this.pos += n;
    return b;
  }

  /** An i32 length and UTF-8 text. */
  text(): string {
    return Buffer.from(this.block()).toString('utf8');
  }

  /** Whether every byte has been read. */
  done(): boolean {
    return this.pos === this.buf.length;
  }
}

/** One byte (0/1) per answer → booleans. */
function booleans(bits: Uint8Array): boolean[] {
  const out = new Array<boolean>(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = bits[i] === 1;
  return out;
}

/** The fields of the answers to probes that build and read responses share. */
interface ProbeStats {
  probeResults: boolean[];
  probeBits: Uint8Array;
  approxCount: number;
  expectedFpp: number;
}

/** Reads the probe answers, approx and fpp that end build and read responses. */
function probeStats(r: ResponseReader): ProbeStats {
  const probeBits = r.block();
  const approxCount = r.i64();
  const expectedFpp = r.f64();
  let probeResults: boolean[] | undefined;
  return {
    get probeResults() {
      probeResults ??= booleans(probeBits);
      return probeResults;
    },
    probeBits,
    approxCount,
    expectedFpp,
  };
}

// ------------------------------------------------------------------ batches

/** Decodes one build response; an error stands for Guava's create() throwing. */
function decodeBuild(r: ResponseReader): GuavaBuildResult | Error {
  if (r.u8() !== 0) return new Error(`Guava BloomFilter.create threw: ${r.text()}`);
  const bytes = r.block();
  const putBits = r.block();
  const stats = probeStats(r);
  let putResults: boolean[] | undefined;
  return {
    bytes,
    get putResults() {
      putResults ??= booleans(putBits);
      return putResults;
    },
    putBits,
    get probeResults() {
      return stats.probeResults;
    },
    probeBits: stats.probeBits,
    approxCount: stats.approxCount,
    expectedFpp: stats.expectedFpp,
  };
}

/** Decodes one read response. */
function decodeRead(r: ResponseReader): GuavaReadResult {
  if (r.u8() !== 0) return { ok: false, error: r.text() };
  const stats = probeStats(r);
  return {
    ok: true,
    get probeResults() {
      return stats.probeResults;
    },
    probeBits: stats.probeBits,
    approxCount: stats.approxCount,
    expectedFpp: stats.expectedFpp,
  };
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
 *
 * A large batch can stream: `new GuavaBatch({ stream: true })` starts the JVM at once, and each
 * `await batch.send()` hands it what was queued since the last one (so that the request stream
 * is never held whole, and the JVM works while the test goes on); such a batch ends with
 * {@link GuavaBatch.runAsync}.
 */
export class GuavaBatch {
  private readonly writer = new RequestWriter();
  /** Each request's opcode and decoder, in order: the responses come back in this order. */
  private readonly decoders: { op: number; decode: (r: ResponseReader) => unknown }[] = [];
  private answers: unknown[] | undefined;
  private built = false;
  private readonly harness: Harness | undefined;

  constructor(options: { stream?: boolean } = {}) {
    if (options.stream) this.harness = new Harness(Number.POSITIVE_INFINITY);
  }

  /** Queues a request's decoder; the getter gives its answer once the batch has run. */
  private queue<T>(op: number, decode: (r: ResponseReader) => T): () => T {
    const index = this.decoders.length;
    this.decoders.push({ op, decode });
    return () => {
      if (this.answers === undefined) throw new Error('GuavaBatch: run() the batch first');
      return this.answers[index] as T;
    };
  }

  /** `create` + put + mightContain (see {@link guavaBuild}); the getter throws if create() threw. */
  build<F extends GuavaFunnel>(req: GuavaBuildRequest<F>): () => GuavaBuildResult {
    const w = this.writer;
    w.u8(OP.build);
    w.u8(FUNNEL_IDS[req.funnel]);
    w.u8(STRATEGY_IDS[req.strategy ?? 'MURMUR128_MITZ_64']);
    w.i64(checkLong(req.n, 'n'));
    w.f64(req.fpp);
    w.keys(req.funnel, req.inserts);
    w.keys(req.funnel, req.probes ?? [], req.inserts);
    this.built = true;
    const answer = this.queue(OP.build, decodeBuild);
    return () => {
      const a = answer();
      if (a instanceof Error) throw a;
      return a;
    };
  }

  /** `readFrom` + mightContain (see {@link guavaRead}). */
  read<F extends GuavaFunnel>(req: GuavaReadRequest<F>): () => GuavaReadResult {
    const w = this.writer;
    w.u8(OP.read);
    w.u8(FUNNEL_IDS[req.funnel]);
    w.block(req.bytes);
    if (req.probes === 'previous-build') {
      if (!this.built) throw new Error("GuavaBatch: 'previous-build' probes need a build before");
      w.i32(-1);
    } else {
      w.keys(req.funnel, req.probes ?? []);
    }
    return this.queue(OP.read, decodeRead);
  }

  /** Sizes each pair (see {@link guavaSizing}); a pair Guava refuses answers with its error. */
  sizing(pairs: readonly GuavaSizingPair[]): () => (GuavaSizing | GuavaSizingError)[] {
    const norm = pairs.map((p) => ('n' in p ? { n: p.n, fpp: p.fpp } : { n: p[0], fpp: p[1] }));
    const w = this.writer;
    w.u8(OP.sizing);
    w.i32(norm.length);
    for (const { n, fpp } of norm) {
      w.i64(checkLong(n, 'n'));
      w.f64(fpp);
    }
    return this.queue(OP.sizing, (r) =>
      norm.map(({ n, fpp }): GuavaSizing | GuavaSizingError => {
        if (r.u8() !== 0) return { n, fpp, error: r.text() };
        const bitSize = r.i64();
        const k = r.i32();
        return { n, fpp, bitSize, k, source: r.u8() === 1 ? 'formula' : 'create' };
      }),
    );
  }

  /** `Hashing.murmur3_128().hashObject(key, funnel)` for each key (see {@link guavaHash}). */
  hash<F extends GuavaFunnel>(funnel: F, keys: readonly GuavaKeyFor<F>[]): () => GuavaHash[] {
    const w = this.writer;
    w.u8(OP.hash);
    w.u8(FUNNEL_IDS[funnel]);
    w.keys(funnel, keys);
    return this.queue(OP.hash, (r) => keys.map(() => ({ h1: r.u64(), h2: r.u64() })));
  }

  /**
   * A streaming batch: hands the JVM what was queued since the last call, and resolves once it
   * has taken it. Does nothing in a batch that does not stream.
   */
  async send(): Promise<void> {
    if (this.harness === undefined) return;
    const parts = this.writer.take();
    await this.harness.send(parts);
    this.writer.recycle(parts);
  }

  /** Decodes the whole response stream, request by request. */
  private decode(stream: Buffer): void {
    const r = new ResponseReader(stream);
    this.answers = this.decoders.map(({ op, decode }, i) => {
      const got = r.pos < stream.length ? r.u8() : -1;
      if (got !== op) {
        throw new Error(`Guava harness answered request ${i} (opcode ${op}) with opcode ${got}`);
      }
      return decode(r);
    });
    if (!r.done()) throw new Error('Guava harness sent more than the answers it was asked for');
  }

  /** Runs every queued request in one JVM. A batch runs once; a streaming one with runAsync. */
  run(): void {
    if (this.answers !== undefined) throw new Error('GuavaBatch: a batch runs once');
    if (this.harness !== undefined)
      throw new Error('GuavaBatch: a streaming batch ends with runAsync');
    this.decode(runHarness(Buffer.concat(this.writer.take())));
  }

  /** {@link GuavaBatch.run} without blocking the event loop while the JVM works. */
  async runAsync(): Promise<void> {
    if (this.answers !== undefined) throw new Error('GuavaBatch: a batch runs once');
    const harness = this.harness ?? new Harness(this.writer.size);
    await harness.send(this.writer.take());
    this.decode(await harness.end());
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
