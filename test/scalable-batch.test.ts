/**
 * ScalableBloomFilter's batch paths (src/filters/scalable/batch.ts) against `add` / `has` key by
 * key as the reference: the same counts of new keys, `out` flags, layer counts, moments of growth
 * and bytes, and the same answers, for every funnel, growth 2 and 4, batches with repeats and
 * batches that cross a growth, layers with and without a wasm kernel (small layers, layers read
 * by fromBytes, no WebAssembly), and FilterFullError part way through a batch.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useWasm, usingWasm } from '../src/hash/hasher.js';
import type { Funnel, Key } from '../src/hash/keys.js';
import { FilterFullError, packKeys, ScalableBloomFilter, splitRecords } from '../src/index.js';
import { expectBytes } from './support/bytes.js';
import { collectKernels } from './support/gc.js';
import { mixedKeys as makeMixedKeys } from './support/mixed-keys.js';
import { mulberry32 } from './support/random.js';

const FUNNELS: Funnel[] = ['string', 'utf16', 'int', 'long', 'bytes'];

type Scalable = ScalableBloomFilter<Key>;

/** Seeds of the two key lists: keys to add (streamed with repeats), and keys never added. */
const POOL = 1;
const ABSENT = 2;

/** The most string keys a test takes from each list (the shorter string lists are cut from it). */
const LONGEST: Record<number, number> = { [POOL]: 12000, [ABSENT]: 5000 };

/**
 * `mixedKeys(funnel, n, seed)`, each list made once: the runs with and without WebAssembly read
 * the same lists (nothing here mutates a key list or a key), 'utf16' reads the strings of
 * 'string', and the string lists are made once at their longest and cut to the first n keys
 * followed by the list's edge cases (making strings is most of the cost of these keys).
 */
const made = new Map<string, Key[]>();
function mixedKeys(funnel: Funnel, n: number, seed: number): Key[] {
  const text = funnel === 'string' || funnel === 'utf16';
  const id = `${text ? 'text' : funnel}/${seed}`;
  const edges = makeMixedKeys(funnel, 0, seed).length; // what follows the n keys
  let list = made.get(id);
  if (list === undefined || list.length - edges < n) {
    list = makeMixedKeys(funnel, Math.max(n, text ? (LONGEST[seed] ?? 0) : 0), seed);
    made.set(id, list);
  }
  return list.length - edges === n
    ? list
    : [...list.slice(0, n), ...list.slice(list.length - edges)];
}

/**
 * A stream of `n` keys from `pool`: mostly keys not seen yet, with repeats of earlier keys and
 * of the key just before (so a batch holds copies of its own new keys).
 */
function stream(pool: Key[], n: number, seed: number): Key[] {
  const rnd = mulberry32(seed);
  const out: Key[] = [];
  let next = 0;
  while (out.length < n) {
    const r = rnd();
    if (out.length > 0 && r < 0.1) out.push(out[out.length - 1]!);
    else if (out.length > 0 && r < 0.3) out.push(out[Math.floor(rnd() * out.length)]!);
    else out.push(pool[next++ % pool.length]!);
  }
  return out;
}

/** `add` key by key into `f`, as the reference: the new count and flags, or the error thrown. */
function addEach(f: Scalable, keys: Key[], flags: Uint8Array): { added: number; error: unknown } {
  let added = 0;
  for (const [i, key] of keys.entries()) {
    let fresh: boolean;
    try {
      fresh = f.add(key);
    } catch (error) {
      return { added, error };
    }
    if (fresh) added++;
    flags[i] = fresh ? 1 : 0;
  }
  return { added, error: null };
}

/**
 * Adds `keys` in batches of `sizes` to each filter of `batched` (named by its key) and key by key
 * to `reference`, comparing each batch's count of new keys, flags and layers, then the bytes.
 */
function addBoth(
  batched: Record<string, Scalable>,
  reference: Scalable,
  keys: Key[],
  sizes: number[],
): void {
  const filters = Object.entries(batched);
  let at = 0;
  for (const size of sizes) {
    const part = keys.slice(at, at + size);
    at += part.length;
    const want = new Uint8Array(part.length + 2).fill(9);
    const added = addEach(reference, part, want).added;
    const packed = packKeys(reference.funnel, part);
    for (const [what, f] of filters) {
      const out = new Uint8Array(part.length + 2).fill(9);
      expect(f.addBatch(packed, out), `${what}: new keys of the batch at ${at}`).toBe(added);
      expectBytes(out, want, `${what}: out flags of the batch ending at ${at}`);
      expect(f.layers(), `${what}: layers after ${at} keys`).toEqual(reference.layers());
    }
  }
  for (const [what, f] of filters) {
    expectBytes(f.toBytes(), reference.toBytes(), `${what}: bytes`);
    // The bit counts kept beside the bits (what expectedFpp reads) agree too.
    expect(f.expectedFpp(), `${what}: expectedFpp`).toBe(reference.expectedFpp());
  }
}

/** hasBatch of present and absent keys against has of the reference, key by key. */
function expectSameAnswers(
  batched: Scalable,
  reference: Scalable,
  keys: Key[],
  what: string,
): void {
  // Packed once for both calls (hasBatch only reads its batch).
  const packed = packKeys(batched.funnel, keys);
  const got = batched.hasBatch(packed);
  const want = Uint8Array.from(keys, (key) => (reference.has(key) ? 1 : 0));
  expectBytes(got, want, `${what}: hasBatch`);
  const into = new Uint8Array(keys.length + 1).fill(7);
  batched.hasBatch(packed, into);
  expectBytes(into.subarray(0, keys.length), want, `${what}: hasBatch into out`);
  expect(into[keys.length]).toBe(7);
}

/** Batch sizes summing to `total`: random in [1, max], with some empty batches. */
function sizes(total: number, max: number, seed: number): number[] {
  const rnd = mulberry32(seed);
  const out: number[] = [];
  for (let left = total; left > 0; ) {
    const size = rnd() < 0.05 ? 0 : Math.min(left, 1 + Math.floor(rnd() * max));
    out.push(size);
    left -= size;
  }
  return out;
}

/** Whether layer i of `f` has its bits in a wasm kernel (a private field of BloomFilter). */
function hasKernel(f: Scalable, i: number): boolean {
  return (f.layer(i) as unknown as { kernel: unknown }).kernel !== null;
}

function equivalence(label: string): void {
  describe(label, () => {
    for (const funnel of FUNNELS) {
      for (const growth of [2, 4] as const) {
        it(`${funnel}, growth ${growth}: small layers, many growths, repeats in and across batches`, () => {
          const make = () =>
            ScalableBloomFilter.create({ capacity: 3, fpp: 0.01, growth, funnel }) as Scalable;
          const a = make();
          const b = make();
          // 3,501 new keys: 11 layers of 3 to 3,072 keys at growth 2, 6 layers at growth 4.
          const keys = stream(mixedKeys(funnel, 4000, POOL), 5000, 3);
          addBoth({ [`${funnel}/${growth}`]: a }, b, keys, sizes(keys.length, 1500, growth));
          expect(a.layerCount).toBe(growth === 2 ? 11 : 6);
          const absent = mixedKeys(funnel, 3000, ABSENT);
          expectSameAnswers(a, b, [...absent, ...keys.slice(0, 3000)], `${funnel}/${growth}`);
        });
      }
    }

    it('fpp 1e-6 and large layers (wasm kernels where available), one batch of every key', async () => {
      await collectKernels(); // the kernels the tests before left alive: at most 256 at once
      const make = () =>
        ScalableBloomFilter.create({ capacity: 1200, fpp: 1e-6, funnel: 'string' }) as Scalable;
      const a = make();
      const b = make();
      // 9,094 new keys: layers of 1,200, 2,400, 4,800 and 9,600 keys, the smallest of 40,320
      // bits (a kernel takes 32,768 and up).
      const keys = stream(mixedKeys('string', 12000, POOL), 13000, 5);
      addBoth({ large: a }, b, keys, [keys.length]);
      expect(a.layerCount).toBe(4);
      expect(a.layer(0).bitSize).toBe(40320);
      for (let i = 0; i < a.layerCount; i++) expect(hasKernel(a, i)).toBe(usingWasm());
      expectSameAnswers(
        a,
        b,
        [...mixedKeys('string', 5000, ABSENT), ...keys.slice(0, 5000)],
        'large',
      );
    });

    it('grows in the middle of a batch at the moment add would', () => {
      for (const room of [0, 1, 5, 63, 64, 65]) {
        const make = () =>
          ScalableBloomFilter.create({ capacity: 200, fpp: 0.001, funnel: 'int' }) as Scalable;
        const a = make();
        const b = make();
        const keys = mixedKeys('int', 2000, 7);
        const first = keys.slice(0, 200 - room);
        for (const key of first) expect(a.add(key)).toBe(b.add(key));
        // The next batch: copies of held keys, then new keys with repeats past the boundary.
        const part = [...first.slice(0, 10), ...stream(keys.slice(200 - room), 700, room)];
        addBoth({ [`room ${room}`]: a }, b, part, [part.length]);
        expect(a.layerCount).toBe(b.layerCount);
        expect(a.layerCount).toBeGreaterThan(1);
      }
    });

    it('takes records viewed in place (splitRecords: keys with ends), as the deduper passes them', () => {
      const lines = stream(
        Array.from({ length: 4000 }, (_, i) => `https://example.com/é/${i}`),
        6000,
        14,
      ) as string[];
      const buffer = new TextEncoder().encode(`${lines.join('\r\n')}\r\n`);
      const records = splitRecords(buffer);
      expect(records.ends).toBeDefined();
      // With '\r\n' line ends each key stops before the '\r': its end is not the next offset.
      const want = lines.map((line) => new TextEncoder().encode(line));
      const make = () =>
        ScalableBloomFilter.create({ capacity: 50, fpp: 0.001, funnel: 'bytes' }) as Scalable;
      const a = make();
      const b = make();
      const out = new Uint8Array(lines.length);
      const flags = new Uint8Array(lines.length);
      expect(a.addBatch(records, out)).toBe(addEach(b, want, flags).added);
      expectBytes(out, flags, 'out flags');
      expectBytes(a.toBytes(), b.toBytes(), 'bytes');
      expectBytes(a.hasBatch(records), new Uint8Array(lines.length).fill(1), 'hasBatch');
    });

    it('continues a filter read by fromBytes (layers over copied words)', async () => {
      await collectKernels(); // the kernels the tests before left alive: at most 256 at once
      for (const funnel of ['string', 'long'] as const) {
        const start = ScalableBloomFilter.create({ capacity: 500, fpp: 0.01, funnel }) as Scalable;
        const keys = stream(mixedKeys(funnel, 12000, POOL), 15000, 9);
        for (const key of keys.slice(0, 5000)) start.add(key);
        const a = ScalableBloomFilter.fromBytes<Key>(start.toBytes());
        const b = ScalableBloomFilter.fromBytes<Key>(start.toBytes());
        // Layers read from bytes get storage of their own: a kernel when large enough.
        for (let i = 0; i < a.layerCount; i++) {
          expect(hasKernel(a, i)).toBe(usingWasm() && a.layer(i).bitSize >= 32768);
        }
        expect(a.layer(a.layerCount - 1).bitSize).toBeGreaterThanOrEqual(32768);
        // With { copy: false } the layers view the bytes (no kernel): the same results.
        const c = ScalableBloomFilter.fromBytes<Key>(start.toBytes(), { copy: false });
        expect(hasKernel(c, c.layerCount - 1)).toBe(false);
        addBoth(
          { [`fromBytes ${funnel}`]: a, [`in place ${funnel}`]: c },
          b,
          keys.slice(5000),
          sizes(10000, 3000, 10),
        );
        expect(a.layerCount).toBeGreaterThan(start.layerCount);
        expectSameAnswers(
          a,
          b,
          [...mixedKeys(funnel, 5000, ABSENT), ...keys],
          `fromBytes ${funnel}`,
        );
      }
    });
  });
}

equivalence('ScalableBloomFilter batches, with WebAssembly where available');

describe('without WebAssembly', () => {
  beforeAll(() => useWasm(false));
  afterAll(() => useWasm(true));
  it('hashes in JavaScript', () => expect(usingWasm()).toBe(false));
  equivalence('ScalableBloomFilter batches, JavaScript hashing and walks');
});

describe('ScalableBloomFilter batches at the size limit', () => {
  /** A chain whose next layer cannot be made, with `room` keys left in its only layer. */
  function nearlyFull(room: number, capacity = 2 ** 40): Scalable {
    const f = ScalableBloomFilter.restore(capacity, 0.01, 2, 0.9, 'int');
    f.restoreLayer(64 * 64, 3, new Uint32Array(128), capacity - room);
    return f as Scalable;
  }

  for (const room of [0, 3, 100]) {
    it(`throws FilterFullError at the key that needs a new layer (room ${room}), as add does`, () => {
      const keys = [...stream(mixedKeys('int', 400, 12), 600, 13)];
      const a = nearlyFull(room);
      const b = nearlyFull(room);
      const out = new Uint8Array(keys.length).fill(9);
      const want = new Uint8Array(keys.length).fill(9);
      const reference = addEach(b, keys, want);
      expect(reference.error).toBeInstanceOf(FilterFullError);
      expect(() => a.addBatch(packKeys('int', keys), out)).toThrow(FilterFullError);
      // Keys before the failing one were added, their flags written; nothing after it.
      expectBytes(out, want, 'out flags');
      expect(a.layers()).toEqual(b.layers());
      expect(a.layers()[0]!.count).toBe(2 ** 40);
      expectBytes(a.toBytes(), b.toBytes(), 'bytes');
    });
  }

  it('refuses past 2^53 keys as add does', () => {
    const a = nearlyFull(0, 2 ** 52);
    expect(() => a.addBatch(packKeys('int', [1, 2, 3]))).toThrow(FilterFullError);
    expect(a.size).toBe(2 ** 52);
  });
});
