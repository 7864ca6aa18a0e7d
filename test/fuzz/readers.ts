/**
 * THE table of readers of outside bytes that the fuzz suite (test/fuzz/readers.test.ts, small
 * budget) and `npm run fuzz` (scripts/fuzz.ts, large budget) run. A new reader joins with one
 * line in {@link FUZZ_READERS}: `bytesReader(name, seeds, read)` for a reader of a byte array.
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeSidecar } from '../../src/node/sidecar.js';
import {
  BloomFilter,
  ChunkedBloomFilter,
  crc32c,
  FilterCascade,
  fromBytes,
  type Key,
  load,
  readParquetBloomFilters,
  SplitBlockBloomFilter,
} from '../../src/node.js';
import { forge } from '../support/native-bytes.js';
import type { FuzzReader } from './engine.js';

const GOLDEN = new URL('../fixtures/golden/', import.meta.url);

async function golden(match: (name: string) => boolean): Promise<Uint8Array[]> {
  const names = (await readdir(GOLDEN)).filter(match).sort();
  return Promise.all(names.map(async (n) => new Uint8Array(await readFile(new URL(n, GOLDEN)))));
}

/** A key of each funnel, to query whatever filter a reader accepted. */
const PROBE: Record<string, Key> = {
  string: 'probe',
  utf16: 'probe',
  int: 7,
  long: 7n,
  bytes: new Uint8Array([1, 2, 3]),
};

/** Queries an accepted filter: it must answer, describe itself and write itself out. */
function use(filter: {
  funnel: string;
  has(key: never): boolean;
  estimatedCount(): number;
  toBytes(): Uint8Array;
}): void {
  const key = PROBE[filter.funnel];
  if (key === undefined) throw new Error(`unexpected funnel ${filter.funnel}`);
  if (typeof filter.has(key as never) !== 'boolean') throw new Error('has() did not answer');
  const count = filter.estimatedCount();
  // NaN where a type documents that it cannot estimate (an inverted MLBF cascade).
  if (!(count >= 0 || Number.isNaN(count))) throw new Error(`estimatedCount() gave ${count}`);
  filter.toBytes();
}

/** A reader of a byte array; `read` uses what it read and throws `FormatError` to reject. */
export function bytesReader(
  name: string,
  seeds: () => Promise<readonly Uint8Array[]> | readonly Uint8Array[],
  read: (bytes: Uint8Array) => void,
  resign?: (bytes: Uint8Array) => Uint8Array,
): FuzzReader {
  return { name, seeds: async () => seeds(), read, resign };
}

/** Re-signs a native container's CRC-32C trailer. */
const resignNative = (bytes: Uint8Array): Uint8Array => forge(bytes, () => {});

/** Re-signs a chunked file: the trailer covers the 88-byte head and the index. */
function resignChunked(bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  const v = new DataView(out.buffer);
  const indexAt = v.getUint32(24 + 48, true) + v.getUint32(24 + 52, true) * 2 ** 32;
  const end = out.length - 4;
  if (out.length < 92 || indexAt > end) return out;
  v.setUint32(end, crc32c(out.subarray(indexAt, end), crc32c(out.subarray(0, 88))), true);
  return out;
}

/** Re-signs a sidecar: the metadata CRC and the embedded container's trailer. */
function resignSidecar(bytes: Uint8Array): Uint8Array {
  const out = bytes.slice();
  const v = new DataView(out.buffer);
  const m = v.getUint32(8, true);
  if (16 + m > out.length) return out;
  v.setUint32(12, crc32c(out.subarray(16, 16 + m), crc32c(out.subarray(0, 12))), true);
  const start = 16 + Math.ceil(m / 8) * 8;
  if (start + 4 <= out.length) {
    const body = out.length - 4;
    v.setUint32(body, crc32c(out.subarray(start, body)), true);
  }
  return out;
}

function guavaSeeds(): Uint8Array[] {
  return [
    BloomFilter.create({ capacity: 20, fpp: 0.1 }),
    BloomFilter.create({ capacity: 100, fpp: 0.01, strategy: 'MURMUR128_MITZ_32' }),
  ].map((f, i) => {
    for (let k = 0; k < 10 * (i + 1); k++) f.add(`g${k}`);
    return f.toGuava();
  });
}

function parquetSeeds(): Uint8Array[] {
  return [1, 3].map((blocks) => {
    const f = new SplitBlockBloomFilter({ blocks, type: 'INT64' });
    for (let k = 0; k < 20; k++) f.add(BigInt(k));
    return f.toParquet();
  });
}

/** The 12 bytes that once hung the Parquet header reader (a list of 2^63 booleans). */
export const HANGING_PARQUET_HEADER = Uint8Array.from([
  0x59, 0xf1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x00,
]);

/** A small Parquet file written by DuckDB: 2 row groups, a string and a BIGINT column, filters. */
const PARQUET_FILE = new URL('./fixtures/small-bloom.parquet', import.meta.url);

async function parquetFile(): Promise<Uint8Array> {
  return new Uint8Array(await readFile(PARQUET_FILE));
}

/** The DuckDB file with its first filter's header overwritten by the hanging header's 11 bytes. */
async function parquetWithHangingHeader(): Promise<Uint8Array> {
  const bytes = await parquetFile();
  const at = bloomFilterOffsets(bytes)[0];
  if (at === undefined) throw new Error('the fixture has no bloom filter');
  bytes.set(HANGING_PARQUET_HEADER.subarray(0, 11), at);
  return bytes;
}

/** Where each filter's header starts: found by its `15 <varint>` + BLOCK/XXHASH/UNCOMPRESSED. */
export function bloomFilterOffsets(bytes: Uint8Array): number[] {
  const tail = [0x1c, 0x1c, 0x00, 0x00, 0x1c, 0x1c, 0x00, 0x00, 0x1c, 0x1c, 0x00, 0x00, 0x00];
  const out: number[] = [];
  for (let i = 0; i + 3 + tail.length <= bytes.length; i++) {
    if (bytes[i] !== 0x15) continue;
    let j = i + 1;
    while (j < bytes.length && (bytes[j]! & 0x80) !== 0) j++;
    j++;
    if (tail.every((b, t) => bytes[j + t] === b)) out.push(i);
  }
  return out;
}

/** Queries every filter of a Parquet file read from bytes. */
async function readParquet(bytes: Uint8Array): Promise<void> {
  for (const { filter } of await readParquetBloomFilters(bytes)) use(filter as never);
}

/** Small MLBF files (versions 1 and 2) of cascades built here. */
function mlbfSeeds(): Uint8Array[] {
  const include = Array.from({ length: 40 }, (_, i) => `in-${i}`);
  const exclude = Array.from({ length: 200 }, (_, i) => `out-${i}`);
  const cascade = FilterCascade.build({ include, exclude });
  return [cascade.toMlbf(), cascade.toMlbf({ version: 1 })];
}

/**
 * A reader of files: each input is written to one temporary file, which `open` reads by path.
 */
export function fileReader(
  name: string,
  seeds: () => Promise<readonly Uint8Array[]> | readonly Uint8Array[],
  open: (path: string) => Promise<void>,
  resign?: (bytes: Uint8Array) => Uint8Array,
): FuzzReader {
  let dir: string | null = null;
  return {
    name,
    seeds: async () => seeds(),
    async read(bytes) {
      dir ??= await mkdtemp(join(tmpdir(), 'bloomkit-fuzz-'));
      const path = join(dir, 'input');
      await writeFile(path, bytes);
      await open(path);
    },
    resign,
    async close() {
      if (dir !== null) await rm(dir, { recursive: true, force: true });
      dir = null;
    },
  };
}

/** Opens a chunked file, queries it and verifies every chunk with keys. */
async function readChunked(path: string): Promise<void> {
  const filter = await ChunkedBloomFilter.open(path, { cacheBytes: 1 << 16 });
  try {
    const funnel = filter.info.funnel;
    await filter.hasMany([PROBE[funnel]!, PROBE[funnel]!]);
    await filter.verify();
    filter.expectedFpp();
  } finally {
    await filter.close();
  }
}

const nativeSeeds = () => golden((n) => n.endsWith('.blmk') && !n.startsWith('chunked-'));

/** Every reader of outside bytes, one line each. */
export const FUZZ_READERS: readonly FuzzReader[] = [
  bytesReader('native', nativeSeeds, (b) => use(fromBytes(b) as never), resignNative),
  fileReader(
    'native file (load)',
    nativeSeeds,
    async (p) => use((await load(p)) as never),
    resignNative,
  ),
  bytesReader('guava', guavaSeeds, (b) => use(BloomFilter.fromGuava(b) as never)),
  {
    ...bytesReader('parquet bloom filter', parquetSeeds, (b) =>
      use(SplitBlockBloomFilter.fromParquet(b, { type: 'INT64' }) as never),
    ),
    known: () => [HANGING_PARQUET_HEADER],
  },
  {
    name: 'parquet file',
    seeds: async () => [await parquetFile()],
    read: readParquet,
    known: async () => [await parquetWithHangingHeader()],
  },
  fileReader(
    'chunked file',
    () => golden((n) => n.startsWith('chunked-')),
    readChunked,
    resignChunked,
  ),
  bytesReader('mlbf', mlbfSeeds, (b) => {
    const cascade = FilterCascade.fromMlbf(b);
    if (cascade !== null) use(cascade as never);
  }),
  bytesReader(
    'sidecar',
    () => golden((n) => n.endsWith('.bloom')),
    (b) => use(decodeSidecar(b).filter as never),
    resignSidecar,
  ),
];
