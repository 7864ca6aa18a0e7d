/**
 * Streaming save/load (bloomkit/node): round trips through files and streams, atomic writes,
 * rejection of bad input without allocating for forged lengths, and the memory proof: a large
 * filter is saved without a second copy and loaded with exactly one.
 */
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GOLDEN_CASES } from '../scripts/golden-cases.js';
import {
  BloomFilter,
  ChunkedBloomFilter,
  CountingBloomFilter,
  FormatError,
  fromBytes,
  load,
  save,
} from '../src/node.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** heap + external + arrayBuffers, after a full collection. */
function used(): number {
  // Twice: V8 frees dead ArrayBuffers' memory after the collection that found them, so the
  // first call collects and the second settles the external/arrayBuffers counters.
  gc();
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.external + m.arrayBuffers;
}

/**
 * Runs `work` while sampling live memory (after a full collection) every few ms; returns its
 * result and the peak growth. Collecting first keeps transient garbage (a stream's spent 64 KiB
 * chunks) out of the measure, so what is measured is what the code holds on to.
 */
async function peakGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growth: number }> {
  const base = used();
  let peak = base;
  const sample = () => {
    peak = Math.max(peak, used());
  };
  const timer = setInterval(sample, 40);
  try {
    const result = await work();
    sample();
    return { result, growth: peak - base };
  } finally {
    clearInterval(timer);
  }
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
      f.add(f.funnel === 'int' ? 5 : 'x');
      const path = join(dir, 'f.blmk');
      const n = await save(f, path);
      const bytes = new Uint8Array(await readFile(path));
      expect(n).toBe(bytes.length);
      expect(bytes).toEqual(f.toBytes());
      const g = await load(path);
      expect(g).toBeInstanceOf(BloomFilter);
      expect((g as BloomFilter).equals(f)).toBe(true);
      expect((g as BloomFilter).bitCount).toBe(f.bitCount);
      expect((fromBytes(bytes) as BloomFilter).equals(f)).toBe(true);
    }
  });

  it('round-trips through streams, whatever the chunk sizes', async () => {
    const f = sample();
    const out = new PassThrough();
    const written = collect(out);
    await save(f, out);
    out.end();
    const bytes = await written;
    expect(bytes).toEqual(f.toBytes());
    for (const size of [1, 3, 40, 41, 1000, 1 << 20]) {
      const chunks: Uint8Array[] = [];
      for (let p = 0; p < bytes.length; p += size) chunks.push(bytes.subarray(p, p + size));
      const g = (await load(Readable.from(chunks))) as BloomFilter;
      expect(g.equals(f), `chunks of ${size}`).toBe(true);
    }
    async function* generator() {
      yield bytes.subarray(0, 100);
      yield bytes.subarray(100);
    }
    expect(((await load(generator())) as BloomFilter).equals(f)).toBe(true);
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

  it('saves and loads types without a streaming codec through their toBytes()/fromBytes()', async () => {
    const c = CountingBloomFilter.create({ capacity: 1000, fpp: 0.01 });
    for (let i = 0; i < 500; i++) c.add(`c${i}`);
    const path = join(dir, 'counting.blmk');
    await save(c, path);
    expect(new Uint8Array(await readFile(path))).toEqual(c.toBytes());
    const d = await load(path);
    expect(d).toBeInstanceOf(CountingBloomFilter);
    for (let i = 0; i < 500; i++) expect(d.has(`c${i}`)).toBe(true);
    expect(d.toBytes()).toEqual(c.toBytes());
    const e = await load(Readable.from([c.toBytes()]));
    expect(e.toBytes()).toEqual(c.toBytes());
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
    expect(((await load(path)) as BloomFilter).equals(old)).toBe(true);
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    const newer = sample(3000);
    await save(newer, path);
    expect(((await load(path)) as BloomFilter).equals(newer)).toBe(true);
  });

  it('rejects bad arguments with TypeError/RangeError', async () => {
    await expect(save({} as never, join(dir, 'x'))).rejects.toThrow(TypeError);
    await expect(save(sample(), 42 as never)).rejects.toThrow(TypeError);
    await expect(load(42 as never)).rejects.toThrow(TypeError);
    await expect(load(Readable.from(['text'], { objectMode: true }))).rejects.toThrow(
      /must yield bytes/,
    );
    await expect(load(Readable.from([sample().toBytes()]), { maxBytes: -1 })).rejects.toThrow(
      /maxBytes must be a positive number, got -1/,
    );
  });
});

describe('every filter type', () => {
  // The golden table builds one filter of each in-memory type; each must survive save/load.
  for (const c of GOLDEN_CASES.filter((g) => g.type !== 7 && g.kind !== 'sidecar')) {
    it(`saves and loads ${c.file.replace(/\.blmk$/, '')} through a file and a stream`, async () => {
      const bytes = await c.build();
      const filter = fromBytes(bytes);
      const path = join(dir, c.file);
      await save(filter, path);
      expect(new Uint8Array(await readFile(path))).toEqual(bytes);
      const fromFile = await load(path);
      expect(fromFile.constructor).toBe(filter.constructor);
      expect(fromFile.toBytes()).toEqual(bytes);
      const fromStream = await load(Readable.from([bytes.subarray(0, 7), bytes.subarray(7)]));
      expect(fromStream.toBytes()).toEqual(bytes);
    });
  }
});

describe('load rejects bad input with FormatError', () => {
  it('truncated files and streams, at every header offset and inside the payload', async () => {
    const bytes = sample().toBytes();
    const path = join(dir, 'cut.blmk');
    for (const n of [0, 1, 4, 10, 23, 24, 30, 39, 40, 41, 1000, bytes.length - 1]) {
      await writeFile(path, bytes.subarray(0, n));
      await expect(load(path), `file of ${n} bytes`).rejects.toThrow(FormatError);
      await expect(load(Readable.from([bytes.subarray(0, n)])), `stream of ${n}`).rejects.toThrow(
        FormatError,
      );
    }
    await writeFile(path, bytes.subarray(0, 1000));
    await expect(load(path)).rejects.toThrow(
      /truncated: the header announces \d+ bytes, the file has 1000/,
    );
    await expect(load(Readable.from([bytes.subarray(0, 1000)]))).rejects.toThrow(
      /truncated: the input ends inside the payload at byte 1000/,
    );
  });

  it('trailing bytes, a bad checksum, a chunked file', async () => {
    const bytes = sample().toBytes();
    const path = join(dir, 'bad.blmk');
    await writeFile(path, Buffer.concat([bytes, Buffer.from([0])]));
    await expect(load(path)).rejects.toThrow(/length mismatch/);
    await expect(load(Readable.from([bytes, new Uint8Array(1)]))).rejects.toThrow(
      /continues after/,
    );
    const flipped = bytes.slice();
    flipped[500]! ^= 4;
    await writeFile(path, flipped);
    await expect(load(path)).rejects.toThrow(/checksum mismatch/);
    await expect(load(Readable.from([flipped]))).rejects.toThrow(/checksum mismatch/);
    const chunked = join(dir, 'chunked.blmk');
    await ChunkedBloomFilter.build(chunked, ['a', 'b'], { capacity: 10, fpp: 0.01 });
    await expect(load(chunked)).rejects.toThrow(/chunked filter file.*ChunkedBloomFilter\.open/);
  });

  it('a forged 2^50-byte length allocates nothing, from a file or a stream', async () => {
    const forged = sample().toBytes();
    const v = new DataView(forged.buffer);
    v.setUint32(20, 2 ** 18, true); // L += 2^50
    v.setUint32(28, 2 ** 21, true); // and an absurd m (≥ 2^53)
    const path = join(dir, 'forged.blmk');
    await writeFile(path, forged);
    const { growth } = await peakGrowth(async () => {
      await expect(load(path)).rejects.toThrow(
        /truncated: the header announces 11258999068\d+ bytes/,
      );
      await expect(load(Readable.from([forged]))).rejects.toThrow(/more than maxBytes/);
      // Even a caller who lifts maxBytes gets a FormatError from the parameter checks first.
      await expect(load(Readable.from([forged]), { maxBytes: 2 ** 53 })).rejects.toThrow(
        FormatError,
      );
    });
    expect(growth).toBeLessThan(32 * 2 ** 20);
  });

  it('a stream larger than maxBytes is refused from its header', async () => {
    const f = sample();
    const size = f.toBytes().length;
    await expect(load(Readable.from([f.toBytes()]), { maxBytes: 100 })).rejects.toThrow(
      `announces ${size} bytes, more than maxBytes (100)`,
    );
  });
});

describe('memory: a 128 MiB filter', () => {
  it('is saved without a second copy and loaded with exactly one', async () => {
    const mib = 2 ** 20;
    const f = new BloomFilter({ bits: 128 * mib * 8, hashes: 7 });
    for (let i = 0; i < 200_000; i++) f.add(`big-${i}`);
    const path = join(dir, 'big.blmk');

    const saved = await peakGrowth(() => save(f, path));
    expect(saved.result).toBe(128 * mib + 44);
    expect(saved.growth).toBeLessThan(24 * mib); // toBytes() would add 128 MiB

    const loaded = await peakGrowth(() => load(path));
    const g = loaded.result as BloomFilter;
    expect(loaded.growth).toBeLessThan(128 * mib + 40 * mib); // a second copy would need 256 MiB
    expect(loaded.growth).toBeGreaterThan(120 * mib); // the filter itself
    expect(g.equals(f)).toBe(true);

    const streamed = await peakGrowth(async () => {
      const { createReadStream } = await import('node:fs');
      return load(createReadStream(path), { maxBytes: 256 * mib });
    });
    expect(streamed.growth).toBeLessThan(128 * mib + 40 * mib);
    expect((streamed.result as BloomFilter).equals(f)).toBe(true);
    expect(existsSync(path)).toBe(true);
    await rm(path);
  });
});
