/**
 * Chunked filters larger than memory (HBase CompoundBloomFilter). The central proof: a file many
 * times larger than the chunk cache answers exactly like the in-memory filter built from the same
 * keys ("the same": an array of classic BloomFilters, one per chunk, each given the keys routed to
 * it; chunk bits are compared word for word), with no false negatives and the predicted FPR,
 * while live memory (heap + external + arrayBuffers) stays far below the file size.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BloomFilter,
  ChunkedBloomFilter,
  crc32c,
  FormatError,
  keyBytes,
  murmur3x64_128,
} from '../src/node.js';
import { settledGc } from './support/gc.js';

const MIB = 2 ** 20;

function used(): number {
  // V8 frees dead ArrayBuffers' memory after the collection that found them: settledGc waits
  // for that, so the external/arrayBuffers counters hold live memory only.
  settledGc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external + m.arrayBuffers;
}

/**
 * Samples live memory (after a full GC) while `work` runs; `poke` lets sync code sample too. A
 * sample is a full collection: the timer waits at least three times a sample's cost after the
 * last one (and 400 ms), so sampling stays a small part of the work on a busy machine too.
 */
async function peakGrowth<T>(
  work: (poke: () => void) => Promise<T>,
): Promise<{ result: T; growth: number }> {
  const base = used();
  let peak = base;
  const sample = () => {
    peak = Math.max(peak, used());
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = () => {
    const start = performance.now();
    sample();
    timer = setTimeout(tick, Math.max(400, 3 * (performance.now() - start)));
  };
  timer = setTimeout(tick, 400);
  try {
    const result = await work(sample);
    sample();
    return { result, growth: peak - base };
  } finally {
    clearTimeout(timer);
  }
}

/** The spec's hash routing, computed independently with the BigInt MurmurHash3. */
function specChunk(key: string, chunks: number): number {
  const [h1] = murmur3x64_128(keyBytes('string', key));
  return Number(((h1 >> 32n) * BigInt(chunks)) >> 32n);
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bloomkit-chunked-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a chunked file 23× larger than its cache', () => {
  it('is built and queried in bounded memory and answers exactly like its in-memory chunks', async () => {
    const path = join(dir, 'big.blmk');
    const n = 250_000;
    const capacity = 40_000_000; // sizes a 46 MiB file: 366 chunks of 128 KiB
    function* keys(poke: () => void) {
      for (let i = 0; i < n; i++) {
        // Late in the keys, where anything kept per key would be largest (the timer samples
        // the writing of the file after them).
        if (i === 100_000 || i === n - 1) poke();
        yield `m-${i}`;
      }
    }
    const built = await peakGrowth((poke) =>
      ChunkedBloomFilter.build(path, keys(poke), { capacity, fpp: 0.01, memoryBytes: 2 * MIB }),
    );
    const info = built.result;
    expect(info.chunks).toBe(366);
    expect(info.chunkBytes).toBe(131072);
    expect(info.keys).toBe(n);
    expect(info.fileBytes).toBe(88 + 366 * (131072 + 8) + 366 * 8 + 4); // 45.8 MiB
    // Holding the chunks in memory would add 46 MiB; the spill build keeps to its 2 MiB budget.
    expect(built.growth).toBeLessThan(12 * MIB);
    expect(readdirSync(dir)).toEqual(['big.blmk']); // spill files and temp file are gone

    const cacheBytes = 2 * MIB;
    const f = await ChunkedBloomFilter.open(path, { cacheBytes });
    try {
      expect(info.fileBytes).toBeGreaterThanOrEqual(4 * cacheBytes);
      // has() of the first absent keys, asked while memory is measured, compared below with
      // hasMany and the reference.
      const absent = Array.from({ length: 50_000 }, (_, i) => `absent-${i}`);
      const absentHas: boolean[] = [];
      const queried = await peakGrowth(async (poke) => {
        let negatives = 0;
        // 2 batches of 25,000 keys, at the start and the end of the keys (every key is covered
        // below by the bit-for-bit comparison with the reference). Each reads every chunk, so
        // after the first an unbounded cache would hold the whole file already, and the second
        // goes through a cache already full; a sample after each.
        for (const start of [0, n - 50_000]) {
          const batch = Array.from({ length: 25_000 }, (_, i) => `m-${start + i}`);
          for (const a of await f.hasMany(batch)) if (!a) negatives++;
          poke();
        }
        // And key by key through the cache, 250 present and 250 absent keys in turn (nearly
        // every call reads a chunk).
        for (let i = 0; i < 250; i++) {
          if (!(await f.has(`m-${(i * 1999) % n}`))) negatives++;
          absentHas.push(await f.has(absent[i]!));
        }
        return negatives;
      });
      expect(queried.result).toBe(0); // no false negatives
      // The 2 MiB cache, one batch's keys and hashes, and noise: far below the 46 MiB file.
      expect(queried.growth).toBeLessThan(12 * MIB);
      expect(f.cacheStats().bytes).toBeLessThanOrEqual(cacheBytes);

      // The in-memory filter built from the same keys: one classic BloomFilter per chunk.
      const misrouted: string[] = [];
      for (let i = 0; i < 2000; i++)
        if (f.chunkOf(`m-${i}`) !== specChunk(`m-${i}`, 366)) misrouted.push(`m-${i}`);
      expect(misrouted).toEqual([]);
      const reference = Array.from(
        { length: info.chunks },
        () => new BloomFilter({ bits: info.chunkBytes * 8, hashes: info.hashes }),
      );
      const routed = new Array<number>(info.chunks).fill(0);
      for (let i = 0; i < n; i++) {
        const c = f.chunkOf(`m-${i}`);
        reference[c]!.add(`m-${i}`);
        routed[c]!++;
      }
      const differ: string[] = [];
      for (let c = 0; c < info.chunks; c++) {
        if (!(await f.readChunk(c)).equals(reference[c]!)) differ.push(`chunk ${c} bits`);
        if (f.chunkKeys(c) !== routed[c]) differ.push(`chunk ${c}: ${f.chunkKeys(c)} keys`);
      }
      expect(differ).toEqual([]);
      const answers = await f.hasMany(absent);
      let fp = 0;
      for (let i = 0; i < absent.length; i++) {
        const k = absent[i]!;
        if (answers[i] !== reference[f.chunkOf(k)]!.has(k) && differ.length < 10) differ.push(k);
        if (answers[i]) fp++;
      }
      for (let i = 0; i < absentHas.length; i++)
        if (absentHas[i] !== answers[i] && differ.length < 10) differ.push(`has ${i}`);
      expect(differ).toEqual([]);
      // FPR: 250,000 keys in 384M bits (k = 7) predicts a tiny rate; count it against that.
      const predicted = f.expectedFpp();
      const probes = absent.length;
      expect(fp / probes).toBeLessThan(predicted * 1.1 + 4 * Math.sqrt(predicted / probes) + 1e-5);
    } finally {
      await f.close();
    }
  });
});

describe('hash routing', () => {
  it('spilled and in-memory builds write the same bytes, and the FPR meets its target', async () => {
    // 8 chunks of 131,072 bits, filled to 99.6% of what they hold at 1%: the FPR is measured at
    // capacity (the predicted rate is 0.99%).
    const n = 109_000;
    const keys = Array.from({ length: n }, (_, i) => `k${i}`);
    // One build reads an async iterable (a cursor, a stream); the others read the array.
    async function* streamed() {
      yield* keys;
    }
    const options = { capacity: n, fpp: 0.01, chunkBytes: 16384 };
    const a = join(dir, 'mem.blmk');
    const b = join(dir, 'spill.blmk');
    const c = join(dir, 'spill2.blmk');
    const info = await ChunkedBloomFilter.build(a, streamed(), options);
    await ChunkedBloomFilter.build(b, keys, { ...options, memoryBytes: 40_000 });
    await ChunkedBloomFilter.build(c, keys, { ...options, memoryBytes: 200_000, tmpDir: dir });
    const bytes = await readFile(a);
    expect(Buffer.compare(bytes, await readFile(b))).toBe(0);
    expect(Buffer.compare(bytes, await readFile(c))).toBe(0);
    expect(info).toMatchObject({ routing: 'hash', chunks: 8, hashes: 7, keys: n, capacity: n });

    const f = await ChunkedBloomFilter.open(b);
    try {
      const present = await f.hasMany(keys);
      expect(present.every(Boolean)).toBe(true);
      const probes = 400_000;
      const answers = await f.hasMany(Array.from({ length: probes }, (_, i) => `absent${i}`));
      const rate = answers.filter(Boolean).length / probes;
      const sigma = Math.sqrt((0.01 * 0.99) / probes);
      expect(rate).toBeLessThan(0.01 + 4 * sigma); // at capacity, within the target
      expect(Math.abs(rate - f.expectedFpp())).toBeLessThan(4 * sigma + 0.05 * f.expectedFpp());
    } finally {
      await f.close();
    }
  });

  it('reads each chunk once per hasMany and once for concurrent has() calls', async () => {
    const path = join(dir, 'reads.blmk');
    const keys = Array.from({ length: 20_000 }, (_, i) => `r${i}`);
    const info = await ChunkedBloomFilter.build(path, keys, {
      capacity: 20_000,
      fpp: 0.01,
      chunkBytes: 4096,
    });
    const f = await ChunkedBloomFilter.open(path, { cacheBytes: 0 });
    try {
      await f.hasMany(keys);
      expect(f.cacheStats().reads).toBe(info.chunks);
      const same = keys.filter((k) => f.chunkOf(k) === 3).slice(0, 50);
      const before = f.cacheStats().reads;
      expect((await Promise.all(same.map((k) => f.has(k)))).every(Boolean)).toBe(true);
      expect(f.cacheStats().reads - before).toBe(1);
      expect(f.cacheStats().bytes).toBe(0); // cacheBytes 0: nothing kept
    } finally {
      await f.close();
    }
    const g = await ChunkedBloomFilter.open(path, { cacheBytes: 3 * (4096 + 8) });
    try {
      for (const k of keys.slice(0, 2000)) await g.has(k);
      const s = g.cacheStats();
      expect(s.chunks).toBe(3);
      expect(s.bytes).toBe(3 * 4104);
      expect(s.hits + s.reads).toBe(2000);
      expect(s.hits).toBeGreaterThan(0);
    } finally {
      await g.close();
    }
    await expect(g.has('r1')).rejects.toThrow(/closed/);
  });
});

describe('hasMany with few keys over many chunks', () => {
  it('groups correctly when chunks far outnumber keys', async () => {
    const path = join(dir, 'many-chunks.blmk');
    const keys = Array.from({ length: 60_000 }, (_, i) => `mc${i}`);
    const info = await ChunkedBloomFilter.build(path, keys, {
      capacity: 60_000,
      fpp: 0.01,
      chunkBytes: 64,
    });
    expect(info.chunks).toBeGreaterThan(4 * 3 + 1024);
    const f = await ChunkedBloomFilter.open(path);
    try {
      const probe = ['mc5', 'nope', 'mc59999'];
      expect(await f.hasMany(probe)).toEqual(await Promise.all(probe.map((k) => f.has(k))));
      expect((await f.hasMany(keys)).every(Boolean)).toBe(true);
    } finally {
      await f.close();
    }
  });
});

describe('range routing (sorted input, HBase)', () => {
  const sorted = Array.from({ length: 50_000 }, (_, i) => `r-${String(i).padStart(6, '0')}`);

  it('fills chunks in key order and routes by binary search over first keys', async () => {
    const path = join(dir, 'range.blmk');
    const withRepeats = sorted.flatMap((k, i) => (i % 1000 === 0 ? [k, k] : [k]));
    const info = await ChunkedBloomFilter.build(path, withRepeats, {
      capacity: 50_000,
      fpp: 0.01,
      chunkBytes: 4096,
      routing: 'range',
    });
    const perChunk = Math.floor((4096 * 8 * Math.LN2 ** 2) / -Math.log(0.01));
    expect(info.keysPerChunk).toBe(perChunk);
    expect(info.keys).toBe(50_000); // consecutive repeats are not added twice
    expect(info.chunks).toBe(Math.ceil(50_000 / perChunk));
    // The in-memory reference: chunk i holds keys [i·perChunk, (i+1)·perChunk).
    const reference = Array.from(
      { length: info.chunks },
      () => new BloomFilter({ bits: 4096 * 8, hashes: info.hashes }),
    );
    for (let i = 0; i < sorted.length; i++) reference[Math.floor(i / perChunk)]!.add(sorted[i]!);
    const firstKeys = reference.map((_, c) => sorted[c * perChunk]!);
    const f = await ChunkedBloomFilter.open(path);
    try {
      const unequal: number[] = [];
      for (let c = 0; c < info.chunks; c++)
        if (!(await f.readChunk(c)).equals(reference[c]!)) unequal.push(c);
      expect(unequal).toEqual([]);
      expect((await f.hasMany(sorted)).every(Boolean)).toBe(true);
      const between = sorted.map((k) => `${k}x`);
      const answers = await f.hasMany(between);
      let fp = 0;
      const differ: string[] = [];
      between.forEach((k, i) => {
        let c = firstKeys.length - 1;
        while (firstKeys[c]! > k) c--;
        if (answers[i] !== reference[c]!.has(k) && differ.length < 10) differ.push(k);
        if (answers[i]) fp++;
      });
      expect(differ).toEqual([]);
      expect(fp / between.length).toBeLessThan(0.01 + 4 * Math.sqrt(0.0099 / between.length));
      // Keys before the first chunk are absent without reading anything.
      const reads = f.cacheStats().reads + f.cacheStats().hits;
      for (const k of ['', 'a', 'r-', 'r-00000', 'q']) expect(await f.has(k)).toBe(false);
      expect(f.cacheStats().reads + f.cacheStats().hits).toBe(reads);
      expect(f.chunkOf('a')).toBe(-1);
      expect(await f.hasMany(['', sorted[7]!, 'a', sorted[49_999]!])).toEqual([
        false,
        true,
        false,
        true,
      ]);
      expect(f.chunkOf('zzz')).toBe(info.chunks - 1);
    } finally {
      await f.close();
    }
  });

  it('refuses unsorted input, leaving no file and keeping an existing one', async () => {
    const path = join(dir, 'unsorted.blmk');
    await writeFile(path, 'previous contents');
    await expect(
      ChunkedBloomFilter.build(path, ['b', 'c', 'a'], { capacity: 3, fpp: 0.01, routing: 'range' }),
    ).rejects.toThrow(/sorted by their bytes: key #2 \("a"\) sorts before/);
    expect(await readFile(path, 'utf8')).toBe('previous contents');
    expect(readdirSync(dir).filter((f) => f.includes('unsorted'))).toEqual(['unsorted.blmk']);
    // A key source that fails midway is the same.
    function* failing() {
      yield 'a';
      throw new Error('source broke');
    }
    await expect(
      ChunkedBloomFilter.build(join(dir, 'x.blmk'), failing(), { capacity: 3, fpp: 0.01 }),
    ).rejects.toThrow('source broke');
    expect(existsSync(join(dir, 'x.blmk'))).toBe(false);
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp') || f.startsWith('.bloomkit'))).toEqual(
      [],
    );
  });

  it('an empty range-routed file answers false for everything', async () => {
    const path = join(dir, 'empty.blmk');
    const info = await ChunkedBloomFilter.build(path, [], {
      capacity: 10,
      fpp: 0.01,
      routing: 'range',
    });
    expect(info.chunks).toBe(0);
    const f = await ChunkedBloomFilter.open(path);
    expect(await f.has('anything')).toBe(false);
    expect(await f.hasMany(['a', 'b'])).toEqual([false, false]);
    expect(f.expectedFpp()).toBe(0);
    await f.close();
  });
});

describe('bad options and damaged files', () => {
  it('rejects bad build options with RangeError/TypeError naming the value', async () => {
    const path = join(dir, 'opts.blmk');
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ capacity: 0, fpp: 0.01 }, /capacity must be a positive safe integer, got 0/],
      [{ capacity: 10, fpp: 1.5 }, /fpp must be in \(0, 1\), got 1.5/],
      [
        { capacity: 10, fpp: 0.01, chunkBytes: 100 },
        /chunkBytes must be a multiple of 8 .*got 100/,
      ],
      [{ capacity: 10, fpp: 0.01, chunkBytes: 2 ** 28 }, /chunkBytes must be at most 134217728/],
      [
        { capacity: 10, fpp: 0.01, routing: 'sorted' },
        /routing must be 'hash' or 'range', got "sorted"/,
      ],
      [
        { capacity: 10, fpp: 0.01, routing: 'range', funnel: 'int' },
        /needs funnel 'string' or 'bytes', got "int"/,
      ],
      [
        { capacity: 10, fpp: 0.01, memoryBytes: -1 },
        /memoryBytes must be a positive safe integer, got -1/,
      ],
    ];
    for (const [options, message] of bad) {
      await expect(ChunkedBloomFilter.build(path, [], options as never)).rejects.toThrow(message);
    }
    await expect(
      ChunkedBloomFilter.build(path, 42 as never, { capacity: 1, fpp: 0.1 }),
    ).rejects.toThrow(TypeError);
    await expect(ChunkedBloomFilter.open(path, { cacheBytes: -5 })).rejects.toThrow(
      /cacheBytes .* got -5/,
    );
    expect(existsSync(path)).toBe(false);
  });

  it('rejects foreign, truncated, forged and damaged files with FormatError', async () => {
    const path = join(dir, 'good.blmk');
    const keys = Array.from({ length: 3000 }, (_, i) => `d${i}`);
    const { chunks } = await ChunkedBloomFilter.build(path, keys, {
      capacity: 3000,
      fpp: 0.01,
      chunkBytes: 128,
    });
    expect(chunks).toBe(29);
    const stride = 128 + 8;
    const good = new Uint8Array(await readFile(path));
    const bad = join(dir, 'bad.blmk');
    const attempt = async (bytes: Uint8Array) => {
      await writeFile(bad, bytes);
      return ChunkedBloomFilter.open(bad);
    };
    /** Recomputes the header/index CRC so a forged field reaches the semantic checks. */
    const fixTrailer = (bytes: Uint8Array, indexAt: number) => {
      const v = new DataView(bytes.buffer);
      const end = bytes.length - 4;
      v.setUint32(end, crc32c(bytes.subarray(indexAt, end), crc32c(bytes.subarray(0, 88))), true);
      return bytes;
    };
    const indexAt = 88 + chunks * stride;

    await expect(attempt(BloomFilter.create({ capacity: 10, fpp: 0.1 }).toBytes())).rejects.toThrow(
      /not a chunked filter file: .* type id 1.*use load\(\)/,
    );
    await expect(attempt(good.subarray(0, 50))).rejects.toThrow(/truncated/);
    await expect(attempt(good.subarray(0, good.length - 1))).rejects.toThrow(/truncated/);
    await expect(attempt(new Uint8Array([...good, 0]))).rejects.toThrow(/length mismatch/);
    const forgedChunks = good.slice();
    new DataView(forgedChunks.buffer).setUint32(24 + 12, 2 ** 31, true); // C = 2^31
    await expect(attempt(fixTrailer(forgedChunks, indexAt))).rejects.toThrow(
      /bad\.blmk: chunk count 2147483648 is more than the limit 4194304/,
    );
    new DataView(forgedChunks.buffer).setUint32(24 + 12, 30, true); // C = 30
    await expect(attempt(fixTrailer(forgedChunks, indexAt))).rejects.toThrow(
      /length mismatch: index offset/,
    );
    const forgedCount = good.slice();
    new DataView(forgedCount.buffer).setUint32(indexAt, 7, true); // chunk 0's key count
    await expect(attempt(fixTrailer(forgedCount, indexAt))).rejects.toThrow(
      /the chunks hold \d+ keys, the header says 3000/,
    );
    const flippedIndex = good.slice();
    flippedIndex[indexAt + 3]! ^= 1;
    await expect(attempt(flippedIndex)).rejects.toThrow(/checksum mismatch in the header or index/);

    // A damaged chunk: open works (chunks are not read), the chunk's keys throw, others answer.
    const damaged = good.slice();
    damaged[88 + 5 * stride + 17]! ^= 0x40;
    const f = await attempt(damaged);
    try {
      const inFive = keys.find((k) => f.chunkOf(k) === 5)!;
      const elsewhere = keys.find((k) => f.chunkOf(k) === 6)!;
      await expect(f.has(inFive)).rejects.toThrow(/checksum mismatch in chunk 5/);
      await expect(f.hasMany([elsewhere, inFive])).rejects.toThrow(FormatError);
      expect(await f.has(elsewhere)).toBe(true);
      await expect(f.verify()).rejects.toThrow(/chunk 5/);
    } finally {
      await f.close();
    }
    // A chunk copied into another slot fails: its CRC is bound to its position.
    const swapped = good.slice();
    swapped.copyWithin(88 + stride, 88, 88 + stride);
    const g = await attempt(swapped);
    try {
      await expect(g.verify()).rejects.toThrow(/checksum mismatch in chunk 1/);
    } finally {
      await g.close();
    }
  });
});

describe('absurd sizes', () => {
  it('a capacity that needs too many chunks is a RangeError before any file is touched', async () => {
    const folder = join(dir, 'absurd');
    const { mkdir, readdir } = await import('node:fs/promises');
    await mkdir(folder);
    const path = join(folder, 'huge.blmk');
    await expect(ChunkedBloomFilter.build(path, [], { capacity: 1e15, fpp: 0.5 })).rejects.toThrow(
      /capacity 1000000000000000 at fpp 0.5 needs 1375861207 chunks of 131072 bytes \(a \d+-byte file with a \d+-byte index\), more than the limit of 4194304 chunks; use larger chunkBytes/,
    );
    await expect(
      ChunkedBloomFilter.build(path, [], { capacity: 1e15, fpp: 0.5, routing: 'range' }),
    ).rejects.toThrow(RangeError);
    expect(await readdir(folder)).toEqual([]);
  });

  it('a build sized for 2e8 keys that gets none writes kilobytes, not 229 MiB', async () => {
    const { stat } = await import('node:fs/promises');
    const path = join(dir, 'sparse.blmk');
    const progress: number[] = [];
    const info = await ChunkedBloomFilter.build(path, ['only-key'], {
      capacity: 2e8,
      fpp: 0.01,
      onProgress: (done) => progress.push(done),
    });
    expect(progress).toEqual([1]);
    expect(info.fileBytes).toBeGreaterThan(228 * MIB);
    const st = await stat(path);
    expect(st.size).toBe(info.fileBytes);
    // One chunk with a key, the head and the index take blocks; the empty chunks are holes.
    expect(st.blocks * 512).toBeLessThan(info.chunkBytes + 64 * 1024 + 8 * info.chunks);
    const f = await ChunkedBloomFilter.open(path);
    try {
      expect(await f.has('only-key')).toBe(true);
      expect(await f.hasMany(['only-key', 'other', 'x'])).toEqual([true, false, false]);
      // The async filter contract: async iterables, progress, abort, funnel, count.
      async function* stream() {
        yield 'x';
        yield 'only-key';
      }
      const seen: [number, number | undefined][] = [];
      const answers = await f.hasMany(stream(), { onProgress: (d, t) => seen.push([d, t]) });
      expect(answers).toEqual([false, true]);
      expect(seen.at(-1)).toEqual([2, 2]);
      const stop = new AbortController();
      stop.abort(new Error('no reads'));
      await expect(f.hasMany(['only-key'], { signal: stop.signal })).rejects.toThrow('no reads');
      expect([f.funnel, await f.estimatedCount()]).toEqual(['string', 1]);
      const empty = [...Array(info.chunks).keys()].find((c) => f.chunkKeys(c) === 0)!;
      expect((await f.readChunk(empty)).estimatedCount()).toBe(0);
      await f.verify();
      expect(f.cacheStats().reads).toBeLessThanOrEqual(3); // only the chunk with a key was read
    } finally {
      await f.close();
    }
  });

  it('an aborted build leaves no file and keeps the one it would replace', async () => {
    const path = join(dir, 'aborted.blmk');
    await writeFile(path, 'previous');
    const controller = new AbortController();
    const seen: number[] = [];
    function* keys() {
      for (let i = 0; i < 1_000_000; i++) yield `k${i}`;
    }
    const build = ChunkedBloomFilter.build(path, keys(), {
      capacity: 1_000_000,
      fpp: 0.01,
      chunkBytes: 4096,
      memoryBytes: 1 << 20, // spilled: temporary bucket files too
      signal: controller.signal,
      onProgress: (done) => {
        seen.push(done);
        if (done >= 131072) controller.abort(new Error('stop here'));
      },
    });
    await expect(build).rejects.toThrow('stop here');
    expect(seen).toEqual([65536, 131072]);
    expect(await readFile(path, 'utf8')).toBe('previous');
    expect(
      readdirSync(dir).filter((n) => n.startsWith('aborted') || n.startsWith('.bloomkit')),
    ).toEqual(['aborted.blmk']);
    const before = new AbortController();
    before.abort(new Error('never started'));
    await expect(
      ChunkedBloomFilter.build(join(dir, 'never.blmk'), ['a'], {
        capacity: 10,
        fpp: 0.1,
        signal: before.signal,
      }),
    ).rejects.toThrow('never started');
    expect(existsSync(join(dir, 'never.blmk'))).toBe(false);
  });

  it('a sparse file claiming 10 GiB is refused before its index is read', async () => {
    const { open: openFile } = await import('node:fs/promises');
    const path = join(dir, 'claims-10-gib.blmk');
    // A real small file's head, forged to 64-byte chunks and enough of them for 10 GiB.
    const small = join(dir, 'small.blmk');
    await ChunkedBloomFilter.build(small, ['a'], { capacity: 10, fpp: 0.1, chunkBytes: 64 });
    const head = new Uint8Array(await readFile(small)).slice(0, 88);
    const chunks = Math.floor((10 * 2 ** 30) / 80);
    const v = new DataView(head.buffer);
    v.setUint32(24 + 12, chunks, true);
    v.setUint32(24 + 16, 0, true); // no keys
    v.setUint32(24 + 20, 0, true);
    const indexAt = 88 + chunks * 72;
    const indexLength = 8 * chunks;
    v.setUint32(24 + 48, indexAt % 2 ** 32, true);
    v.setUint32(24 + 52, Math.floor(indexAt / 2 ** 32), true);
    v.setUint32(24 + 56, indexLength % 2 ** 32, true);
    v.setUint32(24 + 60, Math.floor(indexLength / 2 ** 32), true);
    const payload = chunks * 72 + indexLength;
    v.setUint32(16, payload % 2 ** 32, true);
    v.setUint32(20, Math.floor(payload / 2 ** 32), true);
    const fh = await openFile(path, 'w');
    await fh.write(head, 0, head.length, 0);
    await fh.truncate(indexAt + indexLength + 4); // a hole: 8 KiB on disk at most
    await fh.close();
    const { growth } = await peakGrowth(async () => {
      await expect(ChunkedBloomFilter.open(path)).rejects.toThrow(
        new RegExp(`claims-10-gib\\.blmk: chunk count ${chunks} is more than the limit 4194304`),
      );
    });
    expect(growth).toBeLessThan(16 * MIB);
  });
});
