/**
 * The golden-file table: one row per frozen output of bloomkit's writers, per filter type and
 * format version. `scripts/make-golden.ts` writes the missing fixtures from it and
 * `test/golden.test.ts` checks that (a) every fixture still decodes and answers as recorded and
 * (b) the current writer still produces the very same bytes. Each row builds its filter from fixed
 * keys only (no clock, no randomness), so the bytes are a pure function of the code.
 *
 * To freeze a new filter type: add rows here, run `npx tsx scripts/make-golden.ts`, commit the new
 * files. A row's fixture is never regenerated after it is committed (the script refuses without
 * `--force`): a change in the bytes is a format change, and needs a new format version.
 */

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeSidecarPrefix } from '../src/node/sidecar.js';
import {
  BinaryFuseFilter,
  BlockedBloomFilter,
  BloomFilter,
  ChunkedBloomFilter,
  CountingBloomFilter,
  CuckooFilter,
  DcsoBloomFilter,
  FilterCascade,
  type Key,
  type MembershipFilter,
  ScalableBloomFilter,
  SplitBlockBloomFilter,
} from '../src/node.js';
import { ShardedBloomFilter } from '../src/sharded/sharded-bloom.js';

/** A frozen output. */
export interface GoldenCase {
  /** File name under test/fixtures/golden/. */
  file: string;
  /** Native format version the bytes are in. */
  version: number;
  /** Native filter type id of the (embedded) filter: 7 is a chunked file opened from disk. */
  type: number;
  /** `'sidecar'`: the bytes are a sidecar file (prefix + native container). */
  kind?: 'sidecar';
  /** Produces the bytes with the current code. */
  build(): Promise<Uint8Array>;
  /** Keys the decoded fixture must report present. */
  present: readonly Key[];
  /** Keys the decoded fixture must report absent (checked on the frozen bytes). */
  absent: readonly Key[];
}

const strings = (prefix: string, n: number): string[] =>
  Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

const ABSENT = ['absent-a', 'absent-b', 'zzz', ''];

function bloomCase(
  file: string,
  make: () => BloomFilter,
  present: readonly Key[],
  absent: readonly Key[] = ABSENT,
): GoldenCase {
  return {
    file,
    version: 1,
    type: 1,
    present,
    absent,
    async build() {
      const f = make();
      for (const k of present) f.add(k);
      return f.toBytes();
    },
  };
}

/** A row for any in-memory type: `make` builds the filter from fixed keys and operations. */
function filterCase(
  file: string,
  type: number,
  make: () => MembershipFilter,
  present: readonly Key[],
  absent: readonly Key[] = ABSENT,
): GoldenCase {
  return { file, version: 1, type, present, absent, build: async () => make().toBytes() };
}

function filled<F extends MembershipFilter>(filter: F, keys: readonly Key[]): F {
  for (const k of keys) filter.add(k);
  return filter;
}

async function chunkedBytes(
  keys: readonly string[],
  options: Parameters<typeof ChunkedBloomFilter.build>[2],
): Promise<Uint8Array> {
  const dir = await mkdtemp(join(tmpdir(), 'bloomkit-golden-'));
  try {
    const path = join(dir, 'chunked.blmk');
    await ChunkedBloomFilter.build(path, keys, options);
    return new Uint8Array(await readFile(path));
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const RANGE_KEYS = Array.from({ length: 300 }, (_, i) => `row-${String(i).padStart(4, '0')}`);

export const GOLDEN_CASES: readonly GoldenCase[] = [
  bloomCase(
    'bloom-v1-string-mitz64.blmk',
    () => BloomFilter.create({ capacity: 1000, fpp: 0.01 }),
    strings('key', 500),
  ),
  bloomCase(
    'bloom-v1-string-mitz32.blmk',
    () => BloomFilter.create({ capacity: 1000, fpp: 0.01, strategy: 'MURMUR128_MITZ_32' }),
    strings('key', 500),
  ),
  bloomCase(
    'bloom-v1-utf16.blmk',
    () => BloomFilter.create({ capacity: 100, fpp: 0.03, funnel: 'utf16' }),
    ['a', 'é', '\u{1F600}', '\ud800', ...strings('u', 50)],
  ),
  bloomCase(
    'bloom-v1-int.blmk',
    () => BloomFilter.create({ capacity: 300, fpp: 0.03, funnel: 'int' }),
    Array.from({ length: 300 }, (_, i) => i * 7 - 1000),
    [100000, -100000, 2147483647],
  ),
  bloomCase(
    'bloom-v1-long.blmk',
    () => BloomFilter.create({ capacity: 200, fpp: 0.001, funnel: 'long' }),
    [
      0n,
      1n,
      -1n,
      2n ** 62n,
      -(2n ** 63n),
      ...Array.from({ length: 100 }, (_, i) => BigInt(i) * 1_000_003n),
    ],
    [3n, 2n ** 40n],
  ),
  bloomCase(
    'bloom-v1-bytes-empty.blmk',
    () => BloomFilter.create({ capacity: 10, fpp: 0.1, funnel: 'bytes' }),
    [],
    [new Uint8Array(0), new Uint8Array([1, 2, 3])],
  ),
  filterCase(
    'counting-v1.blmk',
    2,
    () => {
      const f = filled(CountingBloomFilter.create({ capacity: 300, fpp: 0.01 }), strings('c', 300));
      filled(f, strings('c', 20)); // counters of 2
      for (const k of strings('gone', 10)) f.add(k);
      for (const k of strings('gone', 10)) f.remove(k);
      return f;
    },
    strings('c', 300),
    ['absent-b', 'zzz', 'nope', 'x1'],
  ),
  filterCase(
    'scalable-v1.blmk',
    3,
    () => filled(ScalableBloomFilter.create({ capacity: 100, fpp: 0.01 }), strings('s', 700)),
    strings('s', 700),
    ['absent-a', 'absent-b', 'zzz', 'nope'],
  ),
  filterCase(
    'cuckoo-v1.blmk',
    4,
    () => {
      const f = filled(CuckooFilter.create({ capacity: 500, fpp: 0.01 }), strings('q', 500));
      for (const k of strings('q', 500).slice(0, 50)) f.remove(k);
      return f;
    },
    strings('q', 500).slice(50),
  ),
  filterCase(
    'blocked-v1.blmk',
    5,
    () => filled(BlockedBloomFilter.create({ capacity: 500, fpp: 0.01 }), strings('b', 500)),
    strings('b', 500),
  ),
  filterCase(
    'split-block-v1-byte-array.blmk',
    6,
    () => filled(SplitBlockBloomFilter.create({ capacity: 400, fpp: 0.01 }), strings('p', 400)),
    strings('p', 400),
  ),
  filterCase(
    'split-block-v1-int64.blmk',
    6,
    () =>
      filled(
        SplitBlockBloomFilter.create({ capacity: 300, fpp: 0.01, type: 'INT64' }),
        Array.from({ length: 300 }, (_, i) => BigInt(i) * 977n - 5000n),
      ),
    Array.from({ length: 300 }, (_, i) => BigInt(i) * 977n - 5000n),
    [1n, 2n ** 50n],
  ),
  filterCase(
    'sharded-bloom-v1.blmk',
    8,
    () =>
      filled(
        ShardedBloomFilter.create({ capacity: 2000, fpp: 0.01, shardBits: 4096 }),
        strings('sh', 2000),
      ),
    strings('sh', 2000),
  ),
  {
    file: 'cascade-v1-murmur3.blmk',
    version: 1,
    type: 9,
    present: strings('in', 200),
    absent: strings('out', 300),
    build: async () =>
      FilterCascade.build({ include: strings('in', 200), exclude: strings('out', 2000) }).toBytes(),
  },
  {
    file: 'cascade-v1-sha256ctr-inverted.blmk',
    version: 1,
    type: 9,
    present: strings('big', 300),
    absent: strings('small', 100),
    build: async () =>
      FilterCascade.build({
        include: strings('big', 300),
        exclude: strings('small', 100),
        hash: 'sha256ctr',
        salt: new TextEncoder().encode('nacl'),
      }).toBytes(),
  },
  {
    file: 'binary-fuse-v1-8.blmk',
    version: 1,
    type: 10,
    present: strings('fuse', 1000),
    absent: ABSENT,
    build: async () => BinaryFuseFilter.build(strings('fuse', 1000)).toBytes(),
  },
  {
    file: 'binary-fuse-v1-16-long.blmk',
    version: 1,
    type: 10,
    present: Array.from({ length: 500 }, (_, i) => BigInt(i) * 1_000_003n),
    absent: [1n, 2n ** 40n, -5n],
    build: async () =>
      BinaryFuseFilter.build(
        Array.from({ length: 500 }, (_, i) => BigInt(i) * 1_000_003n),
        { fingerprintBits: 16, funnel: 'long' },
      ).toBytes(),
  },
  {
    file: 'dcso-v1.blmk',
    version: 1,
    type: 11,
    present: strings('dcso', 500),
    absent: ABSENT,
    async build() {
      const f = DcsoBloomFilter.create({ capacity: 500, fpp: 0.01 });
      for (const k of strings('dcso', 500)) f.add(k);
      f.data = new TextEncoder().encode('attached data');
      return f.toBytes();
    },
  },
  {
    file: 'chunked-v1-hash.blmk',
    version: 1,
    type: 7,
    present: strings('chunked', 2000),
    absent: ['absent-a', 'absent-b', 'zzz', 'chunked-2000'],
    build: () =>
      chunkedBytes(strings('chunked', 2000), { capacity: 2000, fpp: 0.01, chunkBytes: 256 }),
  },
  {
    file: 'chunked-v1-range.blmk',
    version: 1,
    type: 7,
    present: RANGE_KEYS,
    absent: ['a', 'row-', 'row-0000a', 'zzz'],
    build: () =>
      chunkedBytes(RANGE_KEYS, { capacity: 300, fpp: 0.01, chunkBytes: 64, routing: 'range' }),
  },
  {
    file: 'sidecar-v1.bloom',
    version: 1,
    type: 1,
    kind: 'sidecar',
    present: ['u1', 'u2', 'u3'],
    absent: ['u4'],
    async build() {
      const f = BloomFilter.create({ capacity: 3, fpp: 0.01 });
      for (const k of ['u1', 'u2', 'u3']) f.add(k);
      const prefix = encodeSidecarPrefix({
        source: 'data.csv',
        size: 42,
        mtimeMs: 1700000000000.5,
        format: 'csv',
        field: 'id',
        header: true,
        bloom: 'row',
        family: '',
        qualifiers: null,
        records: 3,
        keys: 3,
        fpp: 0.01,
      });
      const body = f.toBytes();
      const out = new Uint8Array(prefix.length + body.length);
      out.set(prefix);
      out.set(body, prefix.length);
      return out;
    },
  },
];
