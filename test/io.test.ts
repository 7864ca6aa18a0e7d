/**
 * Streaming save/load (bloomkit/node): round trips through files and streams, atomic writes,
 * rejection of bad input without allocating for forged lengths, and the memory proof: a 16 MiB
 * filter of each of four types (classic, counting, blocked, scalable) is saved without a second
 * copy and loaded with exactly one.
 */
import { createReadStream, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GOLDEN_CASES } from '../scripts/golden-cases.js';
import {
  BinaryFuseFilter,
  BlockedBloomFilter,
  BloomFilter,
  ChunkedBloomFilter,
  CountingBloomFilter,
  CuckooFilter,
  DcsoBloomFilter,
  FilterCascade,
  FormatError,
  type MembershipFilter,
  ScalableBloomFilter,
  SplitBlockBloomFilter,
  save,
} from '../src/node.js';
import { ShardedBloomFilter } from '../src/redis.js';
import { decodeAny, loadAny } from './support/any-filter.js';
import { expectBytes } from './support/bytes.js';
import { settledGc } from './support/gc.js';
import { forge } from './support/native-bytes.js';
import { lcg, lcgFill } from './support/random.js';

/**
 * heap + external, after a full collection. `external` already includes `arrayBuffers` (Node's
 * docs; measured: a 64 MiB Uint8Array raises both by 64 MiB, a 64 MiB WebAssembly memory raises
 * `external` only), so adding `arrayBuffers` too would count every typed array twice.
 */
function used(): number {
  // V8 frees dead ArrayBuffers' memory after the collection that found them: settledGc waits
  // for that, so the external/arrayBuffers counters hold live memory only.
  settledGc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external;
}

/**
 * Runs `work` while sampling live memory (after a full collection); returns its result and the
 * peak growth. Collecting first keeps transient garbage (a stream's spent 64 KiB chunks) out of
 * the measure, so what is measured is what the code holds on to.
 *
 * A sample is a full collection (15 to 100 ms), so samples are placed, not fired every few ms
 * (at a fixed 40 ms interval the sampler ran after nearly every 64 KiB chunk of a stream load:
 * minutes of CPU on a busy machine). With `timer` false, samples are taken only when `work` calls
 * `poke` (counted in `pokes`): the large saves and loads call it from `onProgress` once all their
 * bytes are through (see {@link once}), where a copy held across the work, or one built up as the
 * bytes go, is at its largest. With a timer (the default), a sample follows the last one after
 * three times its own cost, and at least 40 ms.
 */
async function peakGrowth<T>(
  work: (poke: () => void) => Promise<T>,
  { timer: timed = true }: { timer?: boolean } = {},
): Promise<{ result: T; growth: number; pokes: number }> {
  const base = used();
  let peak = base;
  let pokes = 0;
  const sample = () => {
    peak = Math.max(peak, used());
  };
  const poke = () => {
    pokes++;
    sample();
  };
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = () => {
    const start = performance.now();
    sample();
    timer = setTimeout(tick, Math.max(40, 3 * (performance.now() - start)));
  };
  if (timed) timer = setTimeout(tick, 40);
  try {
    const result = await work(poke);
    sample();
    return { result, growth: peak - base, pokes };
  } finally {
    clearTimeout(timer);
  }
}

/** An `onProgress` that calls `poke` once, when all of the bytes are done. */
function once(poke: () => void): (done: number, total?: number) => void {
  let poked = false;
  return (done, total) => {
    if (poked || total === undefined || done < total) return;
    poked = true;
    poke();
  };
}

/** `loadAny` of the file at `path` as a stream (up to 256 MiB), measured by {@link peakGrowth}. */
function streamedLoad(path: string) {
  return peakGrowth(
    (poke) => loadAny(createReadStream(path), { maxBytes: 256 * 2 ** 20, onProgress: once(poke) }),
    { timer: false },
  );
}

function sample(n = 2000): BloomFilter {
  const f = BloomFilter.create({ capacity: 5000, fpp: 0.01 });
  for (let i = 0; i < n; i++) f.add(`io-${i}`);
  return f;
}

async function collect(stream: Readable): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return new Uint8Array(Buffer.concat(chunks));
}

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'bloomkit-io-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('save and load', () => {
  it('round-trips through a file, and the file holds exactly toBytes()', async () => {
    for (const f of [
      sample(),
      BloomFilter.create({ capacity: 10, fpp: 0.3, funnel: 'int' }),
      BloomFilter.create({ capacity: 3000, fpp: 0.001, strategy: 'MURMUR128_MITZ_32' }),
      BloomFilter.create({ capacity: 3000, fpp: 0.01, shared: true }),
    ]) {
      (f as BloomFilter<string | number>).add(f.funnel === 'int' ? 5 : 'x');
      const path = join(dir, 'f.blmk');
      const n = await save(f, path);
      const bytes = new Uint8Array(await readFile(path));
      expect(n).toBe(bytes.length);
      expectBytes(bytes, f.toBytes());
      const g = await loadAny(path);
      expect(g).toBeInstanceOf(BloomFilter);
      expect((g as BloomFilter).equals(f)).toBe(true);
      expect((g as BloomFilter).bitCount).toBe(f.bitCount);
      expect((decodeAny(bytes) as BloomFilter).equals(f)).toBe(true);
    }
  });

  it('round-trips through streams, whatever the chunk sizes', async () => {
    const f = sample();
    const out = new PassThrough();
    const written = collect(out);
    await save(f, out);
    out.end();
    const bytes = await written;
    expectBytes(bytes, f.toBytes());
    for (const size of [1, 3, 40, 41, 1000, 1 << 20]) {
      const chunks: Uint8Array[] = [];
      for (let p = 0; p < bytes.length; p += size) chunks.push(bytes.subarray(p, p + size));
      const g = (await loadAny(Readable.from(chunks))) as BloomFilter;
      expect(g.equals(f), `chunks of ${size}`).toBe(true);
    }
    async function* generator() {
      yield bytes.subarray(0, 100);
      yield bytes.subarray(100);
    }
    expect(((await loadAny(generator())) as BloomFilter).equals(f)).toBe(true);
  });

  it('does not end a stream it was given, and waits for each slice to be accepted', async () => {
    const seen: number[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _encoding, done) {
        seen.push(chunk.length);
        setTimeout(done, 1);
      },
    });
    const f = sample();
    await save(f, sink);
    expect(sink.writableEnded).toBe(false);
    expect(seen.reduce((a, b) => a + b, 0)).toBe(f.toBytes().length);
    sink.end();
  });

  it('saves anything with a toBytes() through it, and load streams it back', async () => {
    const c = CountingBloomFilter.create({ capacity: 1000, fpp: 0.01 });
    for (let i = 0; i < 500; i++) c.add(`c${i}`);
    // Not a known filter class: written from its toBytes() (one copy).
    const wrapper = { toBytes: () => c.toBytes() };
    const path = join(dir, 'wrapped.blmk');
    expect(await save(wrapper, path)).toBe(c.toBytes().length);
    expectBytes(await readFile(path), c.toBytes());
    const d = await loadAny(path);
    expect(d).toBeInstanceOf(CountingBloomFilter);
    expect((d as CountingBloomFilter).equals(c)).toBe(true);
  });

  it('replaces a file atomically and leaves nothing behind when a save fails', async () => {
    const path = join(dir, 'atomic.blmk');
    const old = sample(10);
    await save(old, path);
    const broken = {
      toBytes(): Uint8Array {
        throw new Error('boom');
      },
    };
    await expect(save(broken, path)).rejects.toThrow('boom');
    const failing = new Writable({
      write(_c, _e, done) {
        done(new Error('disk full'));
      },
    });
    failing.on('error', () => {});
    await expect(save(sample(), failing)).rejects.toThrow('disk full');
    await expect(save(sample(), join(dir, 'no-such-dir', 'x.blmk'))).rejects.toThrow(/ENOENT/);
    expect(((await loadAny(path)) as BloomFilter).equals(old)).toBe(true);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    const newer = sample(3000);
    await save(newer, path);
    expect(((await loadAny(path)) as BloomFilter).equals(newer)).toBe(true);
  });

  it('rejects bad arguments with TypeError/RangeError', async () => {
    await expect(save({} as never, join(dir, 'x'))).rejects.toThrow(TypeError);
    await expect(save(sample(), 42 as never)).rejects.toThrow(TypeError);
    await expect(loadAny(42 as never)).rejects.toThrow(TypeError);
    await expect(loadAny(Readable.from(['text'], { objectMode: true }))).rejects.toThrow(
      /must yield bytes/,
    );
    await expect(loadAny(Readable.from([sample().toBytes()]), { maxBytes: -1 })).rejects.toThrow(
      /maxBytes must be a positive number, got -1/,
    );
  });
});

/** Byte views of a filter's own storage: what `save` must write from and `load` fill. */
function storageOf(f: MembershipFilter): Uint8Array[] {
  const bytesOf = (w: Uint32Array | Uint16Array | Uint8Array) =>
    new Uint8Array(w.buffer, w.byteOffset, w.byteLength);
  if (f instanceof BloomFilter || f instanceof BlockedBloomFilter) return [bytesOf(f.bits.data)];
  if (f instanceof SplitBlockBloomFilter) return [bytesOf(f.bits.data)];
  if (f instanceof CountingBloomFilter) return [f.counters.data];
  if (f instanceof CuckooFilter) return [bytesOf(f.table)];
  if (f instanceof ShardedBloomFilter) return [f.bytes];
  if (f instanceof ScalableBloomFilter) {
    return Array.from({ length: f.layerCount }, (_, i) => bytesOf(f.layer(i).bits.data));
  }
  if (f instanceof BinaryFuseFilter) return [bytesOf(f.fingerprints)];
  if (f instanceof DcsoBloomFilter) return [bytesOf(f.bits.data), f.data];
  // A cascade's payload is its MLBF file, encoded on save (its layers are not one view).
  if (f instanceof FilterCascade) return [];
  throw new Error(`no storage known for ${f.constructor.name}`);
}

/** Same type and same state: the type's `equals` where it has one, and always the same bytes. */
function expectSame(a: MembershipFilter, b: MembershipFilter, what: string): void {
  expect(a.constructor, what).toBe(b.constructor);
  const eq = (a as { equals?: (o: unknown) => boolean }).equals;
  if (typeof eq === 'function') expect(eq.call(a, b), what).toBe(true);
  // Buffer.compare: toEqual walks a 64 MiB array element by element for minutes.
  expect(Buffer.compare(a.toBytes(), b.toBytes()), what).toBe(0);
}

/**
 * Same type, the same parameters (`equals`, or a scalable filter's layer list) and the same bytes
 * in each storage view, without the toBytes() copies of {@link expectSame}.
 */
function expectSameStorage(a: MembershipFilter, b: MembershipFilter, what: string): void {
  expect(a.constructor, what).toBe(b.constructor);
  if (a instanceof ScalableBloomFilter && b instanceof ScalableBloomFilter) {
    expect(a.layers(), what).toEqual(b.layers());
    expect([a.initialCapacity, a.fpp, a.growth, a.ratio, a.funnel], what).toEqual([
      b.initialCapacity,
      b.fpp,
      b.growth,
      b.ratio,
      b.funnel,
    ]);
  } else {
    expect((a as unknown as { equals(o: unknown): boolean }).equals(b), what).toBe(true);
  }
  const [sa, sb] = [storageOf(a), storageOf(b)];
  expect(sa.length, what).toBe(sb.length);
  for (let i = 0; i < sa.length; i++) expect(Buffer.compare(sa[i]!, sb[i]!), what).toBe(0);
}

/** Saves to a Writable that keeps every chunk as handed to it (Node views a Uint8Array). */
async function saveToChunks(f: MembershipFilter): Promise<Uint8Array[]> {
  const chunks: Uint8Array[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  await save(f, sink);
  sink.end();
  return chunks;
}

/** A cuckoo filter whose victim slot is in use (filled until an add fails). */
function fullCuckoo(): CuckooFilter {
  const f = new CuckooFilter({ buckets: 16, fingerprintBits: 12 });
  for (let i = 0; f.victim === undefined; i++) f.add(`v${i}`);
  expect(f.victim).toBeDefined();
  return f;
}

/** The golden table's filters as bytes, built once for the file (each test decodes its own). */
let goldenBytes: Promise<Array<{ name: string; bytes: Uint8Array }>> | undefined;

/** One filter of every in-memory type: the golden table's, and a few edge shapes. */
async function everyType(): Promise<Array<{ name: string; filter: MembershipFilter }>> {
  goldenBytes ??= Promise.all(
    GOLDEN_CASES.filter((g) => g.type !== 7 && g.kind !== 'sidecar').map(async (c) => ({
      name: c.file.replace(/\.blmk$/, ''),
      bytes: await c.build(),
    })),
  );
  const out: Array<{ name: string; filter: MembershipFilter }> = [];
  for (const { name, bytes } of await goldenBytes)
    out.push({ name, filter: decodeAny(bytes.slice()) });
  out.push({ name: 'cuckoo with a victim', filter: fullCuckoo() });
  const shared = BlockedBloomFilter.create({ capacity: 300, fpp: 0.01, shared: true });
  for (let i = 0; i < 300; i++) shared.add(`sh${i}`);
  out.push({ name: 'blocked over shared memory', filter: shared });
  return out;
}

describe('every filter type streams', () => {
  it('from its own memory: save writes each storage view as is, file and stream agree with toBytes()', async () => {
    for (const { name, filter } of await everyType()) {
      const bytes = filter.toBytes();
      const chunks = await saveToChunks(filter);
      expectBytes(Buffer.concat(chunks), bytes, name);
      // Every part of the filter's storage went out as views of it, never as a copy.
      for (const view of storageOf(filter)) {
        const from = chunks.filter((c) => c.buffer === view.buffer);
        expect(
          from.reduce((n, c) => n + c.length, 0),
          `${name}: bytes written straight from storage`,
        ).toBeGreaterThanOrEqual(view.length);
      }
      const path = join(dir, `${name}.blmk`);
      expect(await save(filter, path), name).toBe(bytes.length);
      expectBytes(await readFile(path), bytes, name);
    }
  });

  it('and loads back equal from a file and from streams cut anywhere', async () => {
    for (const { name, filter } of await everyType()) {
      const bytes = filter.toBytes();
      const path = join(dir, `${name}.blmk`);
      await save(filter, path);
      expectSame(await loadAny(path), filter, `${name} from a file`);
      for (const size of [1, 7, 24, 25, 61, 4096, bytes.length]) {
        const chunks: Uint8Array[] = [];
        for (let p = 0; p < bytes.length; p += size) chunks.push(bytes.subarray(p, p + size));
        expectSame(await loadAny(Readable.from(chunks)), filter, `${name} in chunks of ${size}`);
      }
      const out = new PassThrough();
      const written = collect(out);
      await save(filter, out);
      out.end();
      expectSame(await loadAny(Readable.from([await written])), filter, `${name} through a pipe`);
    }
  });

  it('a loaded filter works on: adds and lookups answer as the original', async () => {
    for (const { name, filter } of await everyType()) {
      if (filter instanceof CuckooFilter && filter.victim !== undefined) continue; // full
      if (typeof filter.add !== 'function') continue; // build-once types: nothing to add
      const path = join(dir, `${name}.blmk`);
      await save(filter, path);
      const loaded = await loadAny(path);
      const keyOf = {
        string: 'after-load',
        utf16: 'after-load',
        int: 4242,
        long: 4242n,
        bytes: new Uint8Array([4, 2]),
      } as const;
      const key = keyOf[(filter as unknown as { funnel: keyof typeof keyOf }).funnel];
      filter.add(key as never);
      loaded.add(key as never);
      expect(loaded.has(key as never), name).toBe(true);
      expectSame(loaded, filter, `${name} after an add`);
    }
  });
});

describe('decodeAny(bytes, { copy: false })', () => {
  const make = {
    counting: () => {
      const f = CountingBloomFilter.create({ capacity: 500, fpp: 0.01 });
      for (let i = 0; i < 300; i++) f.add(`z${i}`);
      return f;
    },
    blocked: () => {
      const f = BlockedBloomFilter.create({ capacity: 500, fpp: 0.01 });
      for (let i = 0; i < 300; i++) f.add(`z${i}`);
      return f;
    },
    splitBlock: () => {
      const f = SplitBlockBloomFilter.create({ capacity: 500, fpp: 0.01 });
      for (let i = 0; i < 300; i++) f.add(`z${i}`);
      return f;
    },
    scalable: () => {
      const f = ScalableBloomFilter.create({ capacity: 100, fpp: 0.01 });
      for (let i = 0; i < 500; i++) f.add(`z${i}`);
      return f;
    },
    sharded: () => {
      const f = ShardedBloomFilter.create({ capacity: 500, fpp: 0.01, shardBits: 1024 });
      for (let i = 0; i < 300; i++) f.add(`z${i}`);
      return f;
    },
  } satisfies Record<string, () => MembershipFilter>;

  /** A copy of `bytes` starting one byte into its buffer (so its payload is misaligned). */
  const misaligned = (bytes: Uint8Array) => {
    const out = new Uint8Array(bytes.length + 1).subarray(1);
    out.set(bytes);
    return out;
  };

  for (const [name, build] of Object.entries(make)) {
    it(`${name}: views the payload in place, and writes reach the bytes`, () => {
      const f = build();
      const bytes = f.toBytes();
      const g = decodeAny(bytes, { copy: false });
      expectSame(g, f, name);
      for (const view of storageOf(g)) expect(view.buffer, name).toBe(bytes.buffer);
      const before = bytes.slice();
      g.add('added-in-place');
      expect(Buffer.compare(bytes, before), name).not.toBe(0);
      // The default copies.
      const h = decodeAny(f.toBytes());
      for (const view of storageOf(h)) expect(view.buffer === bytes.buffer, name).toBe(false);
      // A misaligned payload is copied for word types, viewed for byte types; equal either way.
      const shifted = misaligned(f.toBytes());
      const k = decodeAny(shifted, { copy: false });
      expectSame(k, f, `${name} misaligned`);
      const viewed = name === 'counting' || name === 'sharded';
      for (const view of storageOf(k)) expect(view.buffer === shifted.buffer, name).toBe(viewed);
    });
  }

  it('cuckoo: always copies (its constructor owns the table; see filters/cuckoo/format.ts)', () => {
    const f = fullCuckoo();
    const bytes = f.toBytes();
    const g = decodeAny(bytes, { copy: false });
    expectSame(g, f, 'cuckoo');
    expect(storageOf(g)[0]!.buffer === bytes.buffer).toBe(false);
  });

  it('the static fromBytes of each type takes the option too', () => {
    const c = make.counting();
    const bytes = c.toBytes();
    const d = CountingBloomFilter.fromBytes(bytes, { copy: false });
    expect(d.counters.data.buffer).toBe(bytes.buffer);
    const b = make.blocked().toBytes();
    expect(BlockedBloomFilter.fromBytes(b, { copy: false }).bits.data.buffer).toBe(b.buffer);
    const s = make.splitBlock().toBytes();
    expect(SplitBlockBloomFilter.fromBytes(s, { copy: false }).bits.data.buffer).toBe(s.buffer);
    const l = make.scalable().toBytes();
    expect(ScalableBloomFilter.fromBytes(l, { copy: false }).layer(1).bits.data.buffer).toBe(
      l.buffer,
    );
    const r = make.sharded().toBytes();
    expect(ShardedBloomFilter.fromBytes(r, { copy: false }).bytes.buffer).toBe(r.buffer);
  });
});

describe('load rejects bad input with FormatError', () => {
  it('truncated files and streams, at every header offset and inside the payload', async () => {
    const bytes = sample().toBytes();
    const path = join(dir, 'cut.blmk');
    for (const n of [0, 1, 4, 10, 23, 24, 30, 39, 40, 41, 1000, bytes.length - 1]) {
      await writeFile(path, bytes.subarray(0, n));
      await expect(loadAny(path), `file of ${n} bytes`).rejects.toThrow(FormatError);
      await expect(
        loadAny(Readable.from([bytes.subarray(0, n)])),
        `stream of ${n}`,
      ).rejects.toThrow(FormatError);
    }
    await writeFile(path, bytes.subarray(0, 1000));
    await expect(loadAny(path)).rejects.toThrow(
      /truncated: the header announces \d+ bytes, the file has 1000/,
    );
    await expect(loadAny(Readable.from([bytes.subarray(0, 1000)]))).rejects.toThrow(
      /truncated: the input ends inside the payload at byte 1000/,
    );
  });

  it('trailing bytes, a bad checksum, a chunked file', async () => {
    const bytes = sample().toBytes();
    const path = join(dir, 'bad.blmk');
    await writeFile(path, Buffer.concat([bytes, Buffer.from([0])]));
    await expect(loadAny(path)).rejects.toThrow(/length mismatch/);
    await expect(loadAny(Readable.from([bytes, new Uint8Array(1)]))).rejects.toThrow(
      /continues after/,
    );
    const flipped = bytes.slice();
    flipped[500]! ^= 4;
    await writeFile(path, flipped);
    await expect(loadAny(path)).rejects.toThrow(/checksum mismatch/);
    await expect(loadAny(Readable.from([flipped]))).rejects.toThrow(/checksum mismatch/);
    const chunked = join(dir, 'chunked.blmk');
    await ChunkedBloomFilter.build(chunked, ['a', 'b'], { capacity: 10, fpp: 0.01 });
    await expect(loadAny(chunked)).rejects.toThrow(/chunked filter file.*ChunkedBloomFilter\.open/);
  });

  it('a forged 2^50-byte length allocates nothing, from a file or a stream', async () => {
    const forged = sample().toBytes();
    const v = new DataView(forged.buffer);
    v.setUint32(20, 2 ** 18, true); // L += 2^50
    v.setUint32(28, 2 ** 21, true); // and an absurd m (≥ 2^53)
    const path = join(dir, 'forged.blmk');
    await writeFile(path, forged);
    const { growth } = await peakGrowth(async () => {
      await expect(loadAny(path)).rejects.toThrow(
        /truncated: the header announces 11258999068\d+ bytes/,
      );
      await expect(loadAny(Readable.from([forged]))).rejects.toThrow(/more than maxBytes/);
      // Even a caller who lifts maxBytes gets a FormatError from the parameter checks first.
      await expect(loadAny(Readable.from([forged]), { maxBytes: 2 ** 53 })).rejects.toThrow(
        FormatError,
      );
    });
    expect(growth).toBeLessThan(32 * 2 ** 20);
  });

  it('a stream larger than maxBytes is refused from its header', async () => {
    const f = sample();
    const size = f.toBytes().length;
    await expect(loadAny(Readable.from([f.toBytes()]), { maxBytes: 100 })).rejects.toThrow(
      `announces ${size} bytes, more than maxBytes (100)`,
    );
  });
});

describe('every type rejects damaged files and streams with FormatError', () => {
  /** Both ways in: a file holding `bytes`, and a stream of them in two chunks. */
  async function expectRejected(bytes: Uint8Array, what: string, message?: RegExp): Promise<void> {
    const path = join(dir, 'damaged.blmk');
    await writeFile(path, bytes);
    const cut = Math.min(bytes.length, 30);
    for (const [how, attempt] of [
      ['file', () => loadAny(path)],
      ['stream', () => loadAny(Readable.from([bytes.subarray(0, cut), bytes.subarray(cut)]))],
    ] as const) {
      const error = await attempt().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, `${what} (${how})`).toBeInstanceOf(FormatError);
      if (message !== undefined)
        expect((error as Error).message, `${what} (${how})`).toMatch(message);
    }
  }

  it('truncated at the header, the parameters, the payload and the trailer', async () => {
    for (const { name, filter } of await everyType()) {
      const bytes = filter.toBytes();
      const params = new DataView(bytes.buffer).getUint16(10, true);
      const payloadStart = 24 + params;
      const cuts = [0, 1, 23, 24, payloadStart - 1, payloadStart, payloadStart + 1];
      cuts.push(
        payloadStart + 23,
        payloadStart + 25,
        Math.floor((payloadStart + bytes.length) / 2),
      );
      cuts.push(bytes.length - 5, bytes.length - 4, bytes.length - 1);
      for (const n of cuts.filter((c) => c < bytes.length))
        await expectRejected(bytes.subarray(0, n), `${name} cut at ${n}`);
      await expectRejected(
        Buffer.concat([bytes, Buffer.from([0])]),
        `${name} with a trailing byte`,
        /length mismatch|continues after/,
      );
    }
  });

  /** Where each scalable layer header starts (none for other types). */
  function layerHeaders(f: MembershipFilter, payloadStart: number): number[] {
    if (!(f instanceof ScalableBloomFilter)) return [];
    const starts: number[] = [];
    let p = payloadStart;
    for (const layer of f.layers()) {
      starts.push(p);
      p += 24 + layer.bits / 8;
    }
    return starts;
  }

  it('a flipped bit anywhere in the payload or trailer fails the checksum', async () => {
    for (const { name, filter } of await everyType()) {
      const bytes = filter.toBytes();
      const payloadStart = 24 + new DataView(bytes.buffer).getUint16(10, true);
      const rng = lcg(bytes.length);
      const spots = [payloadStart, bytes.length - 5, bytes.length - 1];
      for (let i = 0; i < 6; i++)
        spots.push(payloadStart + (rng() % (bytes.length - payloadStart)));
      for (const at of spots) {
        const flipped = bytes.slice();
        flipped[at]! ^= 1 << (rng() % 8);
        // A flip inside a scalable layer header may be refused by the layer checks first.
        const layerHead = layerHeaders(filter, payloadStart).some((h) => at >= h && at < h + 24);
        await expectRejected(
          flipped,
          `${name} flipped at ${at}`,
          layerHead ? undefined : /checksum mismatch/,
        );
      }
    }
  });

  it('scalable: forged layers behind a valid CRC are refused as they arrive, like fromBytes', async () => {
    const f = ScalableBloomFilter.create({ capacity: 100, fpp: 0.01 });
    for (let i = 0; i < 700; i++) f.add(`s${i}`);
    expect(f.layerCount).toBe(3);
    const bytes = f.toBytes();
    const [m0, m1] = f.layers().map((l) => l.bits / 8) as [number, number];
    const layer2 = 56 + 24 + m0 + 24 + m1;
    const cases: Array<[string, Uint8Array, RegExp]> = [
      [
        'one layer more',
        forge(bytes, (v) => v.setUint32(24 + 28, 4, true)),
        /layer 2 holds \d+ keys/,
      ],
      [
        'one layer more, the last one full',
        forge(bytes, (v) => {
          v.setUint32(24 + 28, 4, true);
          v.setUint32(layer2 + 8, 400, true);
        }),
        /payload ends inside the header of layer 3/,
      ],
      [
        'one layer fewer',
        forge(bytes, (v) => v.setUint32(24 + 28, 2, true)),
        /bytes follow the last of 2 layers/,
      ],
      // Layer 0's bit size forged to 2^36 bits (8 GiB): past L, so nothing is allocated for it.
      [
        'a huge layer',
        forge(bytes, (v) => {
          v.setUint32(56, 0, true);
          v.setUint32(56 + 4, 16, true);
        }),
        /ends inside the bits of layer 0/,
      ],
      [
        'a short layer 0',
        forge(bytes, (v) => v.setUint32(56 + 8, 99, true)),
        /layer 0 holds 99 keys/,
      ],
    ];
    const { growth } = await peakGrowth(async () => {
      for (const [what, forged, message] of cases) {
        expect(() => decodeAny(forged), what).toThrow(message);
        await expectRejected(forged, what, message);
      }
    });
    expect(growth).toBeLessThan(32 * 2 ** 20);
  });

  it('cuckoo: a forged count behind a valid CRC is refused after the table is read', async () => {
    const f = fullCuckoo();
    const forged = forge(f.toBytes(), (v) => v.setUint32(24 + 24, f.size + 1, true));
    await expectRejected(forged, 'forged count', /fingerprint count \d+ does not match the table/);
  });
});

describe('memory: 16 MiB filters, saved without a second copy and loaded with exactly one', () => {
  const mib = 2 ** 20;

  /**
   * Saves `f` (16 MiB of storage) to a file (returns the bytes saved), loads it from the file and
   * from a stream, and checks the memory each step holds on to: saving ~0, loading one copy (the
   * filter itself). Memory is sampled when all of the bytes are through (`onProgress`), so a second copy held while the
   * bytes go out or come in is seen. The samples are exact to about 1 MiB (measured at 32 MiB:
   * saves 0, loads 30.5 to 32.4 MiB over dozens of runs), so 16 MiB tells one copy from two; and
   * it is two of the 8 MiB slices that save writes, so a slice boundary is crossed too.
   */
  async function measure(name: string, f: MembershipFilter, bytes: number): Promise<number> {
    const path = join(dir, `${name}-big.blmk`);
    const saved = await peakGrowth((poke) => save(f, path, { onProgress: once(poke) }), {
      timer: false,
    });
    const loaded = await peakGrowth((poke) => loadAny(path, { onProgress: once(poke) }), {
      timer: false,
    });
    const streamed = await streamedLoad(path);
    expect(
      [saved.pokes, loaded.pokes, streamed.pokes],
      `${name}: sampled once all bytes were through`,
    ).toEqual([1, 1, 1]);
    // The same state: the type's equals and the same storage bytes (the whole containers of every
    // type, header and CRC included, are compared above at small sizes; toBytes() would copy and
    // checksum the 16 MiB twice per check).
    expectSameStorage(loaded.result, f, `${name} from a file`);
    expectSameStorage(streamed.result, f, `${name} from a stream`);
    await rm(path);
    const report = {
      save: +(saved.growth / mib).toFixed(1),
      load: +(loaded.growth / mib).toFixed(1),
      stream: +(streamed.growth / mib).toFixed(1),
    };
    console.log(`${name} (${bytes / mib} MiB) growth in MiB:`, report);
    expect(saved.growth, `${name} save`).toBeLessThan(8 * mib); // toBytes() would add 16 MiB
    for (const [how, growth] of [
      ['load', loaded.growth],
      ['stream load', streamed.growth],
    ] as const) {
      expect(growth, `${name} ${how}`).toBeGreaterThan(bytes - 4 * mib); // the filter itself
      expect(growth, `${name} ${how}`).toBeLessThan(bytes + 8 * mib); // two copies: 32 MiB
    }
    return saved.result;
  }

  it('classic: 2^27 bits', async () => {
    const f = new BloomFilter({ bits: 2 ** 27, hashes: 7 });
    lcgFill(f.bits.data, 3);
    f.bits.recount();
    // Saved: the bits, then 44 bytes of header, parameters and checksum.
    expect(await measure('classic', f, 16 * mib)).toBe(16 * mib + 44);
  });

  it('counting: 2^25 counters', async () => {
    const f = new CountingBloomFilter({ counters: 2 ** 25, hashes: 7 });
    const { buffer, byteOffset, byteLength } = f.counters.data;
    lcgFill(new Uint32Array(buffer, byteOffset, byteLength / 4), 7); // every 4-bit value
    await measure('counting', f, 16 * mib);
  });

  it('blocked: 2^18 blocks', async () => {
    const f = new BlockedBloomFilter({ blocks: 2 ** 18, hashes: 8 });
    lcgFill(f.bits.data, 5);
    f.bits.recount();
    await measure('blocked', f, 16 * mib);
  });

  it('scalable: two layers of 8 MiB, each filled straight from the stream', async () => {
    const f = ScalableBloomFilter.restore(1000, 0.01, 4, 0.9, 'string');
    for (const [i, count] of [1000, 1234].entries()) {
      const words = new Uint32Array((8 * mib) / 4);
      lcgFill(words, 11 + i);
      f.restoreLayer(8 * mib * 8, 7, words, count);
    }
    await measure('scalable', f, 16 * mib);
  });
});
