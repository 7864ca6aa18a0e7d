/**
 * ScalableBloomFilter (Almeida et al. 2007): layer shapes, the compound bound after 1000× growth,
 * add semantics, the native format and bad input.
 */
import { describe, expect, it } from 'vitest';
import { scalableLayerSize } from '../src/filters/scalable/filter.js';
import {
  bloomSize,
  CuckooFilter,
  FilterFullError,
  FormatError,
  falsePositiveRate,
  fromBytes,
  type PackedKeys,
  packKeys,
  ScalableBloomFilter,
} from '../src/index.js';
import { expectBytes } from './support/bytes.js';
import { forge, trailer } from './support/native-bytes.js';
import { countFound, packedSequence } from './support/packed-keys.js';
import { keys, upper } from './support/random.js';

/** The bytes and offsets of {@link intRun}, reused by every call. */
let runBytes = new DataView(new ArrayBuffer(0));
let runOffsets = new Uint32Array(1);

/**
 * The int keys from, from + 1, ..., from + count - 1 packed as packKeys('int', ...) packs them
 * (4 bytes little-endian each; the proof below checks it), written into buffers reused by every
 * call: packing a million keys from an array each time cost about a tenth of this file.
 */
function intRun(from: number, count: number): PackedKeys {
  if (runOffsets.length < count + 1) {
    runBytes = new DataView(new ArrayBuffer(4 * count));
    runOffsets = Uint32Array.from({ length: count + 1 }, (_, i) => 4 * i);
  }
  for (let i = 0; i < count; i++) runBytes.setInt32(4 * i, from + i, true);
  return {
    bytes: new Uint8Array(runBytes.buffer, 0, 4 * count),
    offsets: runOffsets.subarray(0, count + 1),
  };
}

/** hasBatch over the int keys from, from + 1, ..., from + count - 1, in packed chunks. */
function eachAnswer(
  f: ScalableBloomFilter<number>,
  from: number,
  count: number,
  use: (key: number, yes: boolean) => void,
): void {
  const chunk = 1 << 16;
  for (let at = 0; at < count; at += chunk) {
    const length = Math.min(chunk, count - at);
    const answers = f.hasBatch(intRun(from + at, length));
    for (let i = 0; i < length; i++) use(from + at + i, answers[i] === 1);
  }
}

/** The first of the `count` int keys from `from` that `f` does not hold, if any. */
function firstMiss(
  f: ScalableBloomFilter<number>,
  from: number,
  count: number,
): number | undefined {
  let miss: number | undefined;
  eachAnswer(f, from, count, (key, yes) => {
    if (!yes && miss === undefined) miss = key;
  });
  return miss;
}

/** How many of the `count` int keys from `from` `f` answers true for. */
function hitCount(f: ScalableBloomFilter<number>, from: number, count: number): number {
  let hits = 0;
  eachAnswer(f, from, count, (_key, yes) => {
    if (yes) hits++;
  });
  return hits;
}

describe('ScalableBloomFilter', () => {
  it('gives layer i capacity c0·s^i and rate P(1 − r)r^i, each sized to meet its rate', () => {
    for (const growth of [2, 4] as const) {
      for (const ratio of [0.5, 0.85, 0.9]) {
        const f = ScalableBloomFilter.create({
          capacity: 100,
          fpp: 0.01,
          growth,
          ratio,
          funnel: 'int',
        });
        let next = 0;
        while (f.layerCount < 6) f.add(next++);
        let sum = 0;
        for (const [i, layer] of f.layers().entries()) {
          expect(layer.capacity).toBe(100 * growth ** i);
          expect(layer.fpp).toBeCloseTo(0.01 * (1 - ratio) * ratio ** i, 15);
          // The formula rate of a full layer is within its share: the compound bound holds.
          expect(falsePositiveRate(layer.capacity, layer.bits, layer.hashes)).toBeLessThanOrEqual(
            layer.fpp,
          );
          if (i < 5) expect(layer.count).toBe(layer.capacity);
          sum += layer.fpp;
        }
        expect(sum).toBeLessThan(0.01);
        expect(f.capacity).toBe(f.layers().reduce((a, l) => a + l.capacity, 0));
      }
    }
  });

  it('widens a layer only where Guava sizing would miss its share', () => {
    // Guava sizing for 16 keys at 6.561e-5 (layer 4 of c0 = 1, s = 2, P = 0.001, r = 0.9) gives
    // m = 320, k = 14: a rate 1.023× its share. The layer gets more words instead.
    const guava = bloomSize(16, 6.561e-5);
    expect([guava.bits, guava.hashes]).toEqual([320, 14]);
    expect(falsePositiveRate(16, 320, 14)).toBeGreaterThan(6.561e-5);
    const layer = scalableLayerSize(16, 6.561e-5);
    expect(layer.hashes).toBe(14);
    expect(layer.bits).toBe(384);
    expect(falsePositiveRate(16, layer.bits, 14)).toBeLessThanOrEqual(6.561e-5);
    // Where Guava's rate is within the share, the layer is exactly Guava's filter.
    expect(scalableLayerSize(1000, 0.001)).toEqual({ bits: 14400, hashes: 10 });
    const f = ScalableBloomFilter.create({ capacity: 1, fpp: 0.001, ratio: 0.9, funnel: 'int' });
    for (let i = 0; f.layerCount < 5; i++) f.add(i);
    expect(f.layers()[4]).toMatchObject({ capacity: 16, bits: layer.bits, hashes: 14 });
  });

  it('proof: 1000× the initial capacity, zero false negatives at every step, FPR below P', () => {
    const packed = packKeys('int', [-2, -1, 0, 1, 2 ** 31 - 1]);
    expectBytes(intRun(-2, 4).bytes, packed.bytes.subarray(0, 16));
    expectBytes(intRun(2 ** 31 - 1, 1).bytes, packed.bytes.subarray(16));
    for (const growth of [2, 4] as const) {
      const c0 = 1000;
      const n = 1000 * c0;
      const P = 0.01;
      const f = ScalableBloomFilter.create({ capacity: c0, fpp: P, growth, funnel: 'int' });
      let layers = 1;
      let checks = 0;
      let added = 0;
      // The keys in order, 256 at a time: add's answer against a prior has for the first of each
      // 256 (3,907 keys, at least 4 in every layer), the other 255 through one addBatch (the same
      // layers, growth and answers as add key by key: test/scalable-batch.test.ts compares them
      // for every key over many growths; the rate and size below, fixed to the probe, were
      // measured with add); the count of new keys is checked against the size below for all of
      // them. (Batches of 15 between adds cost 2 s of per-call overhead for the same proof.)
      for (let i = 0; i < n; i += 256) {
        const before = f.has(i);
        if (f.add(i) === before) expect.fail(`add(${i}) did not return the opposite of has`);
        if (!before) added++;
        added += f.addBatch(intRun(i + 1, Math.min(255, n - i - 1)));
        if (f.layerCount !== layers) {
          // A new layer: keys added so far still answer true (the first of every 16; all of them
          // below: a Bloom layer never clears a bit, so a key lost on the way would still be
          // missing).
          layers = f.layerCount;
          checks++;
          for (let j = 0; j <= i; j += 16)
            if (!f.has(j)) expect.fail(`false negative ${j} at ${i}`);
        }
      }
      // Every key, through hasBatch (its answers are has's: test/scalable-batch.test.ts, every
      // funnel over many growths; the rate below, fixed to the probe, was measured through has).
      const miss = firstMiss(f, 0, n);
      if (miss !== undefined) expect.fail(`false negative ${miss} at the end`);
      expect(added).toBe(f.size);
      expect(checks).toBe(growth === 2 ? 9 : 5);
      expect(f.layerCount).toBe(growth === 2 ? 10 : 6);
      // Keys that were false positives when added were not added again (has said true).
      expect(f.size).toBeLessThan(n);
      expect(f.size).toBeGreaterThan(0.99 * n);
      // 400,000 probes: 4 sigma is 10% of the rate (s = 4) and 8% (s = 2), so the two-sided check
      // against the layers' formula rates below still catches a 10% error.
      const probes = 400_000;
      const fp = hitCount(f, -probes, probes);
      const rate = fp / probes;
      // Below P, and near the sum of the layers' formula rates (the bound is not vacuous).
      let predicted = 0;
      for (const l of f.layers()) predicted += falsePositiveRate(l.count, l.bits, l.hashes);
      expect(rate).toBeLessThan(P);
      expect(upper(rate, probes)).toBeLessThan(P);
      expect(Math.abs(rate - predicted)).toBeLessThan(4 * Math.sqrt(predicted / probes));
      // Measured (seeded, deterministic): 0.649% at s = 2, 0.386% at s = 4.
      expect(rate).toBeCloseTo(growth === 2 ? 0.00649 : 0.00386, 6);
      // Memory at this point: 2.06 (s = 2) and 2.63 (s = 4) bytes per key added.
      expect(f.byteLength / n).toBeCloseTo(growth === 2 ? 2.064 : 2.629, 3);
    }
  }, 60_000);

  it('keeps string keys below P across growth too', () => {
    const f = ScalableBloomFilter.create({ capacity: 100, fpp: 0.05, growth: 2, ratio: 0.85 });
    const present = keys('in', 50_000);
    for (const k of present) f.add(k);
    expect(present.filter((k) => !f.has(k))).toEqual([]);
    // The probes `out:0` ... `out:199999` packed without a string each, through hasBatch (its
    // answers are has's: test/scalable-batch.test.ts).
    const probes = 200_000;
    const rate = countFound(f.hasBatch(packedSequence('out:', probes))) / probes;
    // Near the layers' model rate (a binomial 4-sigma band), which is itself below P.
    let predicted = 0;
    for (const l of f.layers()) predicted += falsePositiveRate(l.count, l.bits, l.hashes);
    expect(predicted).toBeLessThan(0.05);
    expect(Math.abs(rate - predicted)).toBeLessThan(4 * Math.sqrt(predicted / probes));
  });

  it('add returns whether the key was new; a present key adds nothing', () => {
    const f = ScalableBloomFilter.create({ capacity: 10, fpp: 0.01 });
    expect(f.add('a')).toBe(true);
    expect(f.add('a')).toBe(false);
    expect(f.size).toBe(1);
    for (const k of keys('k', 9)) f.add(k);
    expect(f.size).toBe(10);
    expect(f.layerCount).toBe(1); // full, but a layer is made only for the next new key
    expect(f.add('a')).toBe(false);
    expect(f.layerCount).toBe(1);
    expect(f.add('new')).toBe(true);
    expect(f.layerCount).toBe(2);
    expect(f.layers()[1]!.count).toBe(1);
  });

  it('answers through each layer as the classic filter does', () => {
    const f = ScalableBloomFilter.create({ capacity: 300, fpp: 0.02 });
    for (const k of keys('k', 3000)) f.add(k);
    expect(f.layerCount).toBe(4);
    const wrong: string[] = [];
    for (const k of keys('probe', 5000)) {
      let any = false;
      for (let i = 0; i < f.layerCount; i++) if (f.layer(i).has(k)) any = true;
      if (f.has(k) !== any) wrong.push(k);
    }
    expect(wrong).toEqual([]);
    expect(() => f.layer(4)).toThrow(/layer must be an index below 4, got 4/);
    expect(f.expectedFpp()).toBeGreaterThan(0);
    expect(f.expectedFpp()).toBeLessThan(0.02);
    // 1 − Π(1 − p_i) over the layers' own rates, also when they are far below 1e-16 (a lightly
    // filled layer at a tight rate), where 1 − p_i rounds to 1: then it is their sum.
    const rates = (g: ScalableBloomFilter) =>
      Array.from({ length: g.layerCount }, (_, i) => g.layer(i).expectedFpp());
    expect(f.expectedFpp()).toBeCloseTo(1 - rates(f).reduce((m, p) => m * (1 - p), 1), 12);
    const tight = ScalableBloomFilter.create({ capacity: 100_000, fpp: 1e-6 });
    for (const k of keys('t', 5000)) tight.add(k);
    const sum = rates(tight).reduce((a, b) => a + b);
    expect(sum).toBeGreaterThan(0);
    expect(sum).toBeLessThan(1e-20);
    expect(tight.expectedFpp() / sum).toBeCloseTo(1, 9);
  });

  it('throws FilterFullError and changes nothing when the next layer cannot be made', () => {
    // A chain whose next layer would need more than 2^36 bits (built through the codec's hooks,
    // so no gigabytes are allocated).
    const f = ScalableBloomFilter.restore(2 ** 40, 0.01, 2, 0.9, 'int');
    f.restoreLayer(64, 1, new Uint32Array(2), 2 ** 40);
    const before = f.toBytes();
    expect(() => f.add(7)).toThrow(FilterFullError);
    expect(() => f.add(7)).toThrow(/cannot grow past 1 layers/);
    expectBytes(f.toBytes(), before);
    expect(f.has(7)).toBe(false);
    // Past 2^53 keys the capacity is no longer exact: also refused.
    const g = ScalableBloomFilter.restore(2 ** 52, 0.01, 4, 0.9, 'int');
    g.restoreLayer(64, 1, new Uint32Array(2), 2 ** 52);
    expect(() => g.add(7)).toThrow(FilterFullError);
  });

  it('clears back to one empty layer and clones independently', () => {
    const f = ScalableBloomFilter.create({ capacity: 10, fpp: 0.01, funnel: 'long' });
    for (let i = 0; i < 100; i++) f.add(BigInt(i));
    const g = f.clone();
    expectBytes(g.toBytes(), f.toBytes());
    f.clear();
    expect(f.layerCount).toBe(1);
    expect(f.size).toBe(0);
    for (let i = 0; i < 100; i++) expect(f.has(i)).toBe(false);
    for (let i = 0; i < 100; i++) expect(g.has(i)).toBe(true);
  });

  describe('native format', () => {
    it('stays frozen: a change to the sizing, hashing or layout changes the CRC', () => {
      const f = ScalableBloomFilter.create({ capacity: 10, fpp: 0.01 });
      for (let i = 0; i < 100; i++) f.add(`g${i}`);
      const bytes = f.toBytes();
      expect([f.layerCount, bytes.length, trailer(bytes).toString(16)]).toEqual([
        4,
        452,
        '5d574728',
      ]);
    });

    const sample = (): ScalableBloomFilter => {
      const f = ScalableBloomFilter.create({ capacity: 50, fpp: 0.02, growth: 4, ratio: 0.8 });
      for (const k of keys('s', 1200)) f.add(k);
      return f;
    };

    it('round-trips every layer (also through fromBytes)', () => {
      const f = sample();
      expect(f.layerCount).toBe(4);
      const bytes = f.toBytes();
      const layerBytes = f.layers().reduce((a, l) => a + 24 + l.bits / 8, 0);
      expect(bytes.length).toBe(24 + 32 + layerBytes + 4);
      const g = ScalableBloomFilter.fromBytes(bytes);
      expect(g.layers()).toEqual(f.layers());
      expect([g.initialCapacity, g.fpp, g.growth, g.ratio, g.funnel]).toEqual([
        50,
        0.02,
        4,
        0.8,
        'string',
      ]);
      expectBytes(g.toBytes(), bytes);
      const h = fromBytes(bytes);
      expect(h).toBeInstanceOf(ScalableBloomFilter);
      expect(keys('s', 1200).filter((k) => !h.has(k))).toEqual([]);
      expect(keys('t', 5000).filter((k) => h.has(k) !== f.has(k))).toEqual([]);
      // The copy keeps growing with the same rules.
      expect(keys('more', 3000).filter((k) => g.add(k) !== f.add(k))).toEqual([]);
      expect(Buffer.compare(g.toBytes(), f.toBytes())).toBe(0);
    });

    it('writes its parameters byte by byte as documented', () => {
      const bytes = ScalableBloomFilter.create({ capacity: 1000, fpp: 0.01 }).toBytes();
      const v = new DataView(bytes.buffer, 24, 32);
      expect(v.getUint32(0, true)).toBe(1000);
      expect(v.getUint32(4, true)).toBe(0);
      expect(v.getFloat64(8, true)).toBe(0.01);
      expect(v.getFloat64(16, true)).toBe(0.9);
      expect(Array.from(bytes.subarray(48, 56))).toEqual([2, 0, 0, 0, 1, 0, 0, 0]);
      // The first layer header: m = 14400, n = 0, k = 10.
      const l = new DataView(bytes.buffer, 56, 24);
      expect([l.getUint32(0, true), l.getUint32(8, true), l.getUint32(16, true)]).toEqual([
        14400, 0, 10,
      ]);
    });

    it('rejects forged parameters and layers with a FormatError', () => {
      const bytes = sample().toBytes();
      const L0 = 56; // the first layer header
      const cases: [string, (v: DataView) => void, RegExp][] = [
        ['c0 = 0', (v) => v.setUint32(24, 0, true), /initial capacity 0/],
        ['fpp = 0', (v) => v.setFloat64(32, 0, true), /target rate 0/],
        ['fpp = NaN', (v) => v.setFloat64(32, Number.NaN, true), /target rate NaN/],
        ['ratio = 1', (v) => v.setFloat64(40, 1, true), /tightening ratio 1/],
        ['growth 3', (v) => v.setUint8(48, 3), /growth factor 3/],
        ['reserved', (v) => v.setUint8(49, 1), /reserved/],
        ['0 layers', (v) => v.setUint32(52, 0, true), /layer count 0/],
        ['65 layers', (v) => v.setUint32(52, 65, true), /layer count 65/],
        ['3 layers of 4', (v) => v.setUint32(52, 3, true), /follow the last of 3 layers/],
        [
          '5 layers of 4',
          (v) => v.setUint32(52, 5, true),
          /layer 3 holds \d+ keys: a layer holds at most 3200 and only the last may hold fewer/,
        ],
        ['m not /64', (v) => v.setUint32(L0, 100, true), /bad bit size 100 in layer 0/],
        ['k = 0', (v) => v.setUint32(L0 + 16, 0, true), /hash functions 0 in layer 0/],
        ['layer reserved', (v) => v.setUint32(L0 + 20, 1, true), /reserved bytes of layer 0/],
        ['count > capacity', (v) => v.setUint32(L0 + 8, 51, true), /layer 0 holds 51 keys/],
        ['early layer not full', (v) => v.setUint32(L0 + 8, 49, true), /layer 0 holds 49 keys/],
        ['hash scheme 0', (v) => v.setUint8(7, 0), /hash scheme id 0/],
        ['funnel 200', (v) => v.setUint8(8, 200), /funnel id 200/],
      ];
      for (const [name, edit, message] of cases) {
        const forged = forge(bytes, edit);
        expect(() => ScalableBloomFilter.fromBytes(forged), name).toThrow(FormatError);
        expect(() => ScalableBloomFilter.fromBytes(forged), name).toThrow(message);
      }
      const cuckoo = CuckooFilter.create({ capacity: 10, fpp: 0.1 }).toBytes();
      expect(() => ScalableBloomFilter.fromBytes(cuckoo)).toThrow(/expected filter type id 3/);
    });
  });

  describe('bad input', () => {
    it('rejects bad options naming the value', () => {
      const bad: [Record<string, unknown>, RegExp][] = [
        [{ capacity: 0, fpp: 0.01 }, /capacity must be a positive safe integer, got 0/],
        [{ capacity: 10, fpp: 1 }, /fpp must be in \(0, 1\), got 1/],
        [{ capacity: 10, fpp: 0.01, growth: 3 }, /growth must be 2 or 4, got 3/],
        [{ capacity: 10, fpp: 0.01, growth: '2' }, /growth must be 2 or 4, got "2"/],
        [{ capacity: 10, fpp: 0.01, ratio: 1 }, /ratio must be in \(0, 1\), got 1/],
        [{ capacity: 10, fpp: 0.01, ratio: 0 }, /ratio must be in \(0, 1\), got 0/],
        [{ capacity: 10, fpp: 0.01, ratio: Number.NaN }, /ratio must be in \(0, 1\), got NaN/],
        [{ capacity: 10, fpp: 0.01, funnel: 'x' }, /funnel must be one of/],
        [{ capacity: 2 ** 40, fpp: 0.01 }, /more than the maximum/],
      ];
      for (const [options, message] of bad) {
        expect(() => ScalableBloomFilter.create(options as never), JSON.stringify(options)).toThrow(
          RangeError,
        );
        expect(() => ScalableBloomFilter.create(options as never)).toThrow(message);
      }
      expect(() => ScalableBloomFilter.create(undefined as never)).toThrow(TypeError);
    });

    it('rejects keys of the wrong kind', () => {
      const f = ScalableBloomFilter.create({ capacity: 10, fpp: 0.1 });
      expect(() => f.add(1 as never)).toThrow(TypeError);
      expect(() => f.has(new Uint8Array(2) as never)).toThrow(TypeError);
      expect(f.size).toBe(0);
      expect(() => ScalableBloomFilter.fromBytes([1, 2] as never)).toThrow(TypeError);
    });
  });
});
