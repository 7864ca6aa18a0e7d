/**
 * Building a chunked filter file from a stream of keys, in bounded memory.
 *
 * Range routing (sorted input, as HBase's CompoundBloomFilterWriter): one chunk is in memory; when
 * it holds `keysPerChunk` keys it is written and the next key starts a new chunk, whose first key
 * goes to the index. Memory: one chunk plus the index.
 *
 * Hash routing (any order): a key's chunk is known from its hash, but keys arrive in any order, so
 * every chunk may be touched at any time. If all C chunks fit in `memoryBytes` they are filled in
 * memory in one pass. Otherwise the build spills each key's hash to bucket files on disk and
 * fills the chunks a group at a time (chunked-spill.ts): memory stays about `memoryBytes` whatever
 * the file size, at the cost of 16 bytes of temporary disk per key (deleted at the end). Keys may
 * be any iterable or async iterable and are read exactly once.
 *
 * The output is written to a temporary file next to `path`, synced and renamed over it, so a
 * failed or aborted build never leaves a partial file and never destroys an existing one.
 *
 * Disk use follows the keys, not the capacity: a chunk that received no key is not written (a hole
 * in a sparse file, see `chunked-format.ts`), so a build sized for 2·10^8 keys that receives none
 * writes its 88-byte head and its index, not 229 MiB of zero chunks. The file's length is still
 * the full layout; copying it with a tool that does not keep holes (`cp --sparse=never`) fills
 * them with zeros. Sizes are checked before any I/O: a hash-routed build whose capacity needs
 * more than 2^22 chunks (an index over 32 MiB) is a `RangeError` that names the chunks and bytes
 * it would need.
 *
 * Progress: `onProgress(keysRead)` every 65,536 keys and once at the end of the input (the total
 * is not known: keys may be a stream); `signal` is checked at the same points and between the
 * groups of chunks written, and an aborted build throws `signal.reason` after removing its files.
 */

import { type FileHandle, mkdtemp, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { checkOptions, checkPositiveInteger, checkProbability, show } from '../errors.js';
import type { ProgressOptions } from '../filters/filter.js';
import { crc32c } from '../formats/crc32c.js';
import { mitz64Probes, views } from '../hash/hasher.js';
import { checkFunnel, type Funnel, type Key, keyBytes } from '../hash/keys.js';
import { Modulus } from '../hash/strategies.js';
import { optimalNumOfBits, optimalNumOfHashFunctions } from '../math.js';
import { writeAtomically } from './atomic-file.js';
import {
  type ChunkedLayout,
  type ChunkedRouting,
  chunkStride,
  compareBytes,
  DEFAULT_CHUNK_BYTES,
  encodeHead,
  encodeIndex,
  hashChunk,
  indexOffset,
  MAX_CHUNK_BYTES,
  MAX_CHUNKS,
  MAX_INDEX_BYTES,
  MIN_CHUNK_BYTES,
} from './chunked-format.js';
import { buildHashSpilled } from './chunked-spill.js';
import { ChunkGroup, forEachKey, layoutOf, writeAt } from './chunked-write.js';
import { checkProgress, throwIfAborted } from './progress.js';

export interface ChunkedBuildOptions extends ProgressOptions {
  /** Expected number of distinct keys (n). */
  capacity: number;
  /** Target false positive rate at `capacity` keys, in (0, 1). */
  fpp: number;
  /** Bytes of bits per chunk, a multiple of 8 in [64, 2^27]; default 131072 (HBase's 128 KiB). */
  chunkBytes?: number;
  /** Key encoding; default `'string'`. */
  funnel?: Funnel;
  /**
   * `'hash'` (default): any key order; a key's chunk comes from its hash. `'range'`: keys must
   * arrive sorted by their funnel bytes (unsigned, as HBase's `Bytes.compareTo`; for ASCII strings
   * the same as JavaScript's sort), and each chunk covers a key range, as in HBase. Range routing
   * takes `'string'` or `'bytes'` keys.
   */
  routing?: ChunkedRouting;
  /** Memory budget of a hash-routed build, in bytes; default 64 MiB. */
  memoryBytes?: number;
  /** Directory for the spill files of a hash-routed build; default: the target's directory. */
  tmpDir?: string;
}

/** The sizes a build settles on before reading keys. */
export interface ChunkedPlan {
  routing: ChunkedRouting;
  funnel: Funnel;
  hashes: number;
  chunkBytes: number;
  /** Hash routing: the number of chunks. Range routing: 0 (known at the end). */
  chunks: number;
  keysPerChunk: number;
  capacity: number;
  fpp: number;
}

const LN2_SQUARED = Math.LN2 * Math.LN2;

/**
 * Sizing. Hash routing: m = Guava's ⌊−n·ln p / ln²2⌋ bits for the whole filter, C = ⌈m / 8B⌉
 * chunks, k = Guava's round(m/n · ln 2). Range routing (HBase): each chunk takes
 * ⌊8B · ln²2 / −ln p⌋ keys, and k = round(8B / keysPerChunk · ln 2).
 */
export function planChunked(options: ChunkedBuildOptions): ChunkedPlan {
  checkOptions('options', options);
  const capacity = checkPositiveInteger('capacity', options.capacity);
  const fpp = checkProbability('fpp', options.fpp);
  const chunkBytes = options.chunkBytes ?? DEFAULT_CHUNK_BYTES;
  checkPositiveInteger('chunkBytes', chunkBytes, MAX_CHUNK_BYTES);
  if (chunkBytes < MIN_CHUNK_BYTES || chunkBytes % 8 !== 0) {
    throw new RangeError(
      `chunkBytes must be a multiple of 8 in [${MIN_CHUNK_BYTES}, ${MAX_CHUNK_BYTES}], got ${show(chunkBytes)}`,
    );
  }
  const funnel = checkFunnel(options.funnel ?? 'string');
  const routing = options.routing ?? 'hash';
  if (routing !== 'hash' && routing !== 'range') {
    throw new RangeError(`routing must be 'hash' or 'range', got ${show(routing)}`);
  }
  if (routing === 'range' && funnel !== 'string' && funnel !== 'bytes') {
    throw new RangeError(`routing 'range' needs funnel 'string' or 'bytes', got ${show(funnel)}`);
  }
  const chunkBits = chunkBytes * 8;
  let hashes: number;
  let chunks = 0;
  let keysPerChunk = 0;
  if (routing === 'hash') {
    const bits = Math.max(1, optimalNumOfBits(capacity, fpp));
    chunks = Math.ceil(bits / chunkBits);
    checkChunkCount(chunks, `capacity ${capacity} at fpp ${fpp}`, chunkBytes);
    hashes = optimalNumOfHashFunctions(capacity, bits);
  } else {
    keysPerChunk = Math.max(1, Math.floor((chunkBits * LN2_SQUARED) / -Math.log(fpp)));
    checkChunkCount(
      Math.ceil(capacity / keysPerChunk),
      `capacity ${capacity} at fpp ${fpp} (${keysPerChunk} keys a chunk)`,
      chunkBytes,
    );
    hashes = optimalNumOfHashFunctions(keysPerChunk, chunkBits);
  }
  if (hashes > 255) {
    throw new RangeError(`fpp ${show(fpp)} needs ${hashes} hash functions, more than 255`);
  }
  return { routing, funnel, hashes, chunkBytes, chunks, keysPerChunk, capacity, fpp };
}

/** Throws a `RangeError` naming what `what` needs when `chunks` is over {@link MAX_CHUNKS}. */
function checkChunkCount(chunks: number, what: string, chunkBytes: number): void {
  if (chunks <= MAX_CHUNKS) return;
  const fileBytes = chunks * chunkStride(chunkBytes) + 8 * chunks;
  throw new RangeError(
    `${what} needs ${chunks} chunks of ${chunkBytes} bytes (a ${fileBytes}-byte file with a ${8 * chunks}-byte index), more than the limit of ${MAX_CHUNKS} chunks; use larger chunkBytes (up to ${MAX_CHUNK_BYTES}) or a smaller capacity`,
  );
}

/** What a build pass leaves for the index: the layout, the keys per chunk, range routing's first keys. */
type Built = { layout: ChunkedLayout; counts: Uint32Array; firstKeys: Uint8Array[] };

/** Builds the file at `path`; returns its layout. */
export async function buildChunked(
  path: string,
  keys: Iterable<Key> | AsyncIterable<Key>,
  options: ChunkedBuildOptions,
): Promise<ChunkedLayout> {
  if (typeof path !== 'string') throw new TypeError(`path must be a string, got ${show(path)}`);
  const plan = planChunked(options);
  const memoryBytes = checkPositiveInteger('memoryBytes', options.memoryBytes ?? 64 * 2 ** 20);
  checkProgress(options);
  let spillDir: string | null = null;
  try {
    return await writeAtomically(path, async (fh) => {
      let result: Built;
      if (plan.routing === 'range') {
        result = await buildRange(fh, plan, keys, options);
      } else {
        const stride = chunkStride(plan.chunkBytes);
        if (plan.chunks * stride <= memoryBytes) {
          result = await buildHashInMemory(fh, plan, keys, options);
        } else {
          spillDir = await mkdtemp(join(options.tmpDir ?? dirname(path), '.bloomkit-spill-'));
          result = await buildHashSpilled(fh, plan, keys, memoryBytes, spillDir, options);
        }
      }
      const { layout, counts, firstKeys } = result;
      const index = encodeIndex(counts, firstKeys);
      if (index.length > MAX_INDEX_BYTES) {
        throw new RangeError(
          `the index would take ${index.length} bytes (${firstKeys.length} first keys), more than the limit of ${MAX_INDEX_BYTES}; use larger chunkBytes`,
        );
      }
      throwIfAborted(options.signal);
      const head = encodeHead({ ...layout, indexLength: index.length });
      const full: ChunkedLayout = { ...layout, indexLength: index.length };
      const trailer = new Uint8Array(4);
      new DataView(trailer.buffer).setUint32(0, crc32c(index, crc32c(head)), true);
      await writeAt(fh, index, indexOffset(full));
      await writeAt(fh, trailer, indexOffset(full) + index.length);
      await writeAt(fh, head, 0);
      return full;
    });
  } finally {
    if (spillDir !== null) await rm(spillDir, { recursive: true, force: true });
  }
}

async function buildHashInMemory(
  fh: FileHandle,
  plan: ChunkedPlan,
  keys: Iterable<Key> | AsyncIterable<Key>,
  progress: ProgressOptions,
): Promise<Built> {
  const group = new ChunkGroup(plan, plan.chunks);
  group.reset(0, plan.chunks);
  const mod = new Modulus(plan.chunkBytes * 8);
  const { funnel, hashes: k, chunks } = plan;
  const words = group.words;
  const strideWords = group.strideWords;
  let total = 0;
  await forEachKey(keys, progress, (key) => {
    mitz64Probes(funnel, key, k, mod);
    const c = hashChunk(views.hash, chunks);
    const base = c * strideWords;
    const w = views.words;
    const m = views.masks;
    for (let i = 0; i < k; i++) words[base + w[i]!]! |= m[i]!;
    group.count(c);
    total++;
  });
  const counts = new Uint32Array(chunks);
  const layout = layoutOf(plan, chunks, total);
  await group.write(fh, layout, counts);
  return { layout, counts, firstKeys: [] };
}

async function buildRange(
  fh: FileHandle,
  plan: ChunkedPlan,
  keys: Iterable<Key> | AsyncIterable<Key>,
  progress: ProgressOptions,
): Promise<Built> {
  const { funnel, hashes: k, keysPerChunk } = plan;
  const group = new ChunkGroup(plan, 1);
  const mod = new Modulus(plan.chunkBytes * 8);
  const words = group.words;
  const firstKeys: Uint8Array[] = [];
  const countList: number[] = [];
  let previous: Uint8Array | null = null;
  let total = 0;
  let seen = 0;
  let indexBytes = 0;
  const layoutSoFar = (): ChunkedLayout => layoutOf(plan, firstKeys.length, total);
  const add = (key: Key): void => {
    mitz64Probes(funnel, key, k, mod);
    const w = views.words;
    const m = views.masks;
    for (let i = 0; i < k; i++) words[w[i]!]! |= m[i]!;
    group.count(0);
    total++;
  };
  const startChunk = (bytes: Uint8Array): void => {
    if (firstKeys.length === MAX_CHUNKS) {
      throw new RangeError(
        `the sorted keys fill more than the limit of ${MAX_CHUNKS} chunks of ${plan.chunkBytes} bytes (${keysPerChunk} keys each); use larger chunkBytes`,
      );
    }
    indexBytes += 8 + bytes.length;
    if (indexBytes > MAX_INDEX_BYTES) {
      throw new RangeError(
        `the index of first keys passes the limit of ${MAX_INDEX_BYTES} bytes at chunk ${firstKeys.length}; use larger chunkBytes`,
      );
    }
    group.reset(firstKeys.length, 1);
    firstKeys.push(bytes);
  };
  await forEachKey(keys, progress, (key) => {
    const bytes = keyBytes(funnel, key);
    seen++;
    if (previous !== null) {
      const order = compareBytes(previous, bytes);
      if (order > 0) {
        throw new RangeError(
          `routing 'range' needs keys sorted by their bytes: key #${seen - 1} (${show(key)}) sorts before the key before it`,
        );
      }
      if (order === 0) return undefined; // a repeat: its bits are set already
    }
    previous = bytes;
    if (firstKeys.length === 0) startChunk(bytes);
    else if (group.counts[0] === keysPerChunk) {
      // The chunk is full: write it, then start the next one with this key.
      countList.push(group.counts[0]!);
      return group.write(fh, layoutSoFar(), null).then(() => {
        startChunk(bytes);
        add(key);
      });
    }
    add(key);
    return undefined;
  });
  if (firstKeys.length > 0) {
    countList.push(group.counts[0]!);
    await group.write(fh, layoutSoFar(), null);
  }
  const layout = layoutSoFar();
  return { layout, counts: Uint32Array.from(countList), firstKeys };
}
