/**
 * Bad input at every public entry point of the core (`bloomkit`): the error is a RangeError,
 * TypeError or one of the exported classes, and its message names the parameter and the value
 * (shared rule: "`RangeError: fpp must be in (0, 1), got 1.5`; never a silent clamp").
 * A failed operation leaves the filter exactly as it was.
 *
 * Values appear in messages as errors.ts `show` prints them: strings quoted, bigints with `n`,
 * typed arrays as `Uint8Array(3)`, other objects as `[object X]`.
 */
import { describe, expect, it } from 'vitest';
import {
  BitArray,
  BloomFilter,
  bitsPerKey,
  bloomSize,
  crc32c,
  estimateCount,
  expectedFpp,
  FormatError,
  type Funnel,
  falsePositiveRate,
  fromBytes,
  type Key,
  keyBytes,
  lowerBoundBitsPerKey,
  MAX_BITS,
  murmur3x64_128,
  optimalNumOfBits,
  optimalNumOfHashFunctions,
  ScalableBloomFilter,
  SharedBitArray,
  type StrategyName,
} from '../src/index.js';

/** How errors.ts `show` prints a value. */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'bigint') return `${value}n`;
  if (typeof value === 'number') return Object.is(value, -0) ? '-0' : String(value);
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (value instanceof Uint8Array) return `Uint8Array(${value.length})`;
  if (Array.isArray(value)) return `Array(${value.length})`;
  return typeof value === 'object' ? Object.prototype.toString.call(value) : String(value);
}

/** The error `fn` throws (fails the test if it returns). */
function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected an error, but the call returned normally');
}

/** Asserts `fn` throws `type` whose message contains the parameter name and the shown value. */
function expectNamed(
  fn: () => unknown,
  type: new (...args: never[]) => Error,
  parameter: string,
  value: unknown,
): void {
  const e = thrown(fn);
  expect(e, `${e.name}: ${e.message}`).toBeInstanceOf(type);
  expect(e.message).toContain(parameter);
  expect(e.message).toContain(shown(value));
}

// ------------------------------------------------------------------ construction

describe('BloomFilter.create', () => {
  it.each([undefined, null, 42, 'capacity=100', true])(
    'options %s (not an object) is a TypeError naming options',
    (options) => {
      expectNamed(() => BloomFilter.create(options as never), TypeError, 'options', options);
    },
  );

  it('missing capacity or fpp is a RangeError naming it', () => {
    expectNamed(
      () => BloomFilter.create({ fpp: 0.01 } as never),
      RangeError,
      'capacity',
      undefined,
    );
    expectNamed(() => BloomFilter.create({ capacity: 100 } as never), RangeError, 'fpp', undefined);
    expect(() => BloomFilter.create({} as never)).toThrow(RangeError);
  });

  it.each(['String', 'utf8', 'UTF-8', '', 'integer', 'bigint', 42, {}])(
    'funnel %s is a RangeError naming funnel and the value',
    (funnel) => {
      expectNamed(
        () => BloomFilter.create({ capacity: 100, fpp: 0.01, funnel: funnel as Funnel }),
        RangeError,
        'funnel',
        funnel,
      );
    },
  );

  it.each(['MITZ_64', 'murmur128_mitz_64', 'MURMUR128_MITZ_128', '', 1, 0])(
    'strategy %s is a RangeError naming strategy and the value',
    (strategy) => {
      expectNamed(
        () => BloomFilter.create({ capacity: 100, fpp: 0.01, strategy: strategy as StrategyName }),
        RangeError,
        'strategy',
        strategy,
      );
    },
  );
});

describe('new BloomFilter({ bits, hashes })', () => {
  it.each([
    0,
    -64,
    1.5,
    Number.NaN,
    Number.POSITIVE_INFINITY,
    MAX_BITS + 1,
    2 ** 60,
    '64',
    undefined,
  ])('bits %s is a RangeError naming bits and the value', (bits) => {
    expectNamed(
      () => new BloomFilter({ bits: bits as number, hashes: 3 }),
      RangeError,
      'bits',
      bits,
    );
  });

  it.each([0, 256, 1000, -1, 1.5, Number.NaN, '3', undefined])(
    'hashes %s is a RangeError naming hashes and the value',
    (hashes) => {
      expectNamed(
        () => new BloomFilter({ bits: 64, hashes: hashes as number }),
        RangeError,
        'hashes',
        hashes,
      );
    },
  );

  it('a bad funnel or strategy in the shape is a RangeError', () => {
    expectNamed(
      () => new BloomFilter({ bits: 64, hashes: 1, funnel: 'nope' as Funnel }),
      RangeError,
      'funnel',
      'nope',
    );
    expectNamed(
      () => new BloomFilter({ bits: 64, hashes: 1, strategy: 'nope' as StrategyName }),
      RangeError,
      'strategy',
      'nope',
    );
  });

  it('a missing shape is a TypeError that names it, not a property-access crash', () => {
    const e = thrown(() => new BloomFilter(undefined as never));
    expect(e).toBeInstanceOf(TypeError);
    expect(e.message).toMatch(/shape|options/);
    expect(e.message).not.toMatch(/Cannot read properties/);
  });
});

// ------------------------------------------------------------------ keys

/** Keys of the wrong kind (TypeError) and out-of-range keys (RangeError), per funnel. */
const WRONG_KIND: Record<Funnel, unknown[]> = {
  string: [42, 42n, new Uint8Array(2), null, undefined, {}, ['a'], true, Symbol.iterator],
  utf16: [42, 42n, new Uint8Array(2), null, undefined, {}, ['a']],
  int: ['1', 1n, new Uint8Array(4), null, undefined, {}, [1], true],
  long: ['1', new Uint8Array(8), null, undefined, {}, [1n], true],
  bytes: [
    'abc',
    [1, 2, 3],
    new ArrayBuffer(3),
    new Int8Array(3),
    new Uint8ClampedArray(3),
    new Uint16Array(2),
    new DataView(new ArrayBuffer(2)),
    42,
    null,
    undefined,
  ],
};

const OUT_OF_RANGE: Partial<Record<Funnel, unknown[]>> = {
  int: [2 ** 31, -(2 ** 31) - 1, 1.5, -0.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53],
  long: [
    2 ** 53,
    -(2 ** 53),
    1.5,
    Number.NaN,
    Number.NEGATIVE_INFINITY,
    2n ** 63n,
    -(2n ** 63n) - 1n,
    2n ** 64n,
  ],
};

const FUNNELS: Funnel[] = ['string', 'utf16', 'int', 'long', 'bytes'];

describe('keys of the wrong kind', () => {
  for (const funnel of FUNNELS) {
    for (const strategy of ['MURMUR128_MITZ_64', 'MURMUR128_MITZ_32'] as const) {
      for (const shared of [false, true]) {
        describe(`${funnel} funnel, ${strategy}${shared ? ', shared' : ''}`, () => {
          const make = () =>
            BloomFilter.create({ capacity: 1000, fpp: 0.01, funnel, strategy, shared });

          it.each(WRONG_KIND[funnel].map((k) => [shown(k), k]))(
            'key %s: TypeError naming the funnel and the value; the filter is unchanged',
            (_s, key) => {
              const f = make();
              const good = goodKeys(funnel);
              f.addMany(good);
              const before = f.bits.data.slice();
              const count = f.bitCount;
              for (const op of ['add', 'has', 'indexesOf'] as const) {
                const e = thrown(() => f[op](key as Key));
                expect(e, `${op}: ${e.message}`).toBeInstanceOf(TypeError);
                expect(e.message).toContain(funnel);
                if (typeof key !== 'symbol') expect(e.message).toContain(shown(key));
              }
              expect(() => f.addMany([key as Key])).toThrow(TypeError);
              expect(f.bits.data).toEqual(before);
              expect(f.bitCount).toBe(count);
              for (const k of good) expect(f.has(k)).toBe(true);
            },
          );

          const range = OUT_OF_RANGE[funnel] ?? [];
          if (range.length > 0) {
            it.each(range.map((k) => [shown(k), k]))(
              'key %s: RangeError naming the funnel and the value; the filter is unchanged',
              (_s, key) => {
                const f = make();
                f.addMany(goodKeys(funnel));
                const before = f.bits.data.slice();
                for (const op of ['add', 'has', 'indexesOf'] as const) {
                  const e = thrown(() => f[op](key as Key));
                  expect(e, `${op}: ${e.message}`).toBeInstanceOf(RangeError);
                  expect(e.message).toContain(funnel);
                  expect(e.message).toContain(shown(key));
                }
                expect(f.bits.data).toEqual(before);
              },
            );
          }
        });
      }
    }
  }

  it('the bounds themselves are accepted', () => {
    const i = BloomFilter.create({ capacity: 10, fpp: 0.01, funnel: 'int' });
    for (const k of [2 ** 31 - 1, -(2 ** 31), 0, -0]) expect(() => i.add(k)).not.toThrow();
    const l = BloomFilter.create({ capacity: 10, fpp: 0.01, funnel: 'long' });
    for (const k of [
      2n ** 63n - 1n,
      -(2n ** 63n),
      Number.MAX_SAFE_INTEGER,
      -Number.MAX_SAFE_INTEGER,
    ]) {
      expect(() => l.add(k)).not.toThrow();
    }
  });

  it('addMany keeps the keys before a bad one and adds nothing after it (no corruption)', () => {
    const f = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    expect(() => f.addMany(['a', 'b', 7 as unknown as string, 'c'])).toThrow(TypeError);
    const g = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    g.addMany(['a', 'b']);
    expect(f.equals(g)).toBe(true);
  });

  it('addMany of a non-iterable is a TypeError', () => {
    const f = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    for (const bad of [null, undefined, 42, {}]) {
      expect(() => f.addMany(bad as never)).toThrow(TypeError);
    }
    expect(f.bitCount).toBe(0);
  });
});

function goodKeys(funnel: Funnel): Key[] {
  switch (funnel) {
    case 'string':
    case 'utf16':
      return ['x', 'y', '😀'];
    case 'int':
      return [1, 2, -3];
    case 'long':
      return [1n, -2, 2n ** 62n];
    case 'bytes':
      return [Uint8Array.of(1), new Uint8Array(0)];
  }
}

// ------------------------------------------------------------------ combining

describe('union / intersect / isCompatible / equals with a non-filter', () => {
  it.each([null, undefined, {}, 'filter', 42])('%s', (other) => {
    const f = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    f.add('x');
    const before = f.bits.data.slice();
    expect(() => f.union(other as never)).toThrow(TypeError);
    expect(() => f.intersect(other as never)).toThrow(TypeError);
    expect(f.isCompatible(other as never)).toBe(false);
    expect(f.equals(other)).toBe(false);
    expect(f.bits.data).toEqual(before);
  });
});

// ------------------------------------------------------------------ decoding

const NOT_BYTES: unknown[] = ['abc', [1, 2, 3], { length: 16 }, null, undefined, 42];

describe('fromBytes / fromGuava with something that is not a Uint8Array', () => {
  const readers: [string, (b: unknown) => unknown][] = [
    ['BloomFilter.fromBytes', (b) => BloomFilter.fromBytes(b as Uint8Array)],
    ['fromBytes', (b) => fromBytes(b as Uint8Array)],
    ['BloomFilter.fromGuava', (b) => BloomFilter.fromGuava(b as Uint8Array)],
  ];

  it.each(readers)('%s: a TypeError naming bytes, for each kind of non-Uint8Array', (_l, read) => {
    for (const b of NOT_BYTES) {
      const e = thrown(() => read(b));
      expect(e, `${shown(b)}: ${e.name}: ${e.message}`).toBeInstanceOf(TypeError);
      expect(e.message).toContain('bytes');
    }
  });

  it.each(readers)('%s: the TypeError also names the value it got', (_l, read) => {
    for (const b of NOT_BYTES) expect(thrown(() => read(b)).message).toContain(shown(b));
  });

  it('readers take an ArrayBuffer or any ArrayBufferView of valid bytes (fetch().arrayBuffer())', () => {
    const f = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    f.add('x');
    for (const bytes of [f.toBytes(), f.toGuava()]) {
      const copy = bytes.slice();
      const views: unknown[] = [copy.buffer, new DataView(copy.buffer), new Int8Array(copy.buffer)];
      for (const v of views) {
        const read =
          bytes === views[0] || bytes[0] === 0x42
            ? BloomFilter.fromBytes(v as Uint8Array)
            : BloomFilter.fromGuava(v as Uint8Array);
        expect(read.has('x')).toBe(true);
      }
    }
    expect(fromBytes(f.toBytes().slice().buffer).has('x' as never)).toBe(true);
  });

  it('fromGuava with a bad funnel option is a RangeError naming funnel', () => {
    const bytes = BloomFilter.create({ capacity: 10, fpp: 0.1 }).toGuava();
    expectNamed(
      () => BloomFilter.fromGuava(bytes, { funnel: 'nope' as Funnel }),
      RangeError,
      'funnel',
      'nope',
    );
  });

  it('fromGuava with null options is a TypeError naming options, not a property-access crash', () => {
    const bytes = BloomFilter.create({ capacity: 10, fpp: 0.1 }).toGuava();
    const e = thrown(() => BloomFilter.fromGuava(bytes, null as never));
    expect(e).toBeInstanceOf(TypeError);
    expect(e.message).toContain('options');
  });
});

describe('random bytes never crash the readers with anything but FormatError', () => {
  /** xorshift32, seeded. */
  function rnd(seed: number): () => number {
    let s = seed >>> 0 || 1;
    return () => {
      s ^= s << 13;
      s ^= s >>> 17;
      s ^= s << 5;
      return (s >>> 0) / 2 ** 32;
    };
  }

  it('2,000 random buffers: fromBytes, fromGuava', () => {
    const r = rnd(77);
    for (let t = 0; t < 2000; t++) {
      const len = Math.floor(r() * 80);
      const b = new Uint8Array(len);
      for (let i = 0; i < len; i++) b[i] = Math.floor(r() * 256);
      if (t % 3 === 0 && len >= 6) {
        // Plausible Guava headers: ordinal 0/1, small k and N.
        b[0] = t & 1;
        b[2] = 0;
        b[3] = 0;
        b[4] = 0;
        b[5] = Math.floor(r() * 12);
      }
      for (const read of [
        () => BloomFilter.fromBytes(b),
        () => fromBytes(b),
        () => BloomFilter.fromGuava(b),
      ]) {
        try {
          const f = read();
          expect(f).toBeInstanceOf(BloomFilter);
        } catch (e) {
          expect(e, `${(e as Error).name}: ${(e as Error).message}`).toBeInstanceOf(FormatError);
        }
      }
    }
  });

  it('every single-bit corruption of a native filter is a FormatError', () => {
    const f = BloomFilter.create({ capacity: 20, fpp: 0.1, funnel: 'int' });
    for (let i = 0; i < 20; i++) f.add(i);
    const bytes = f.toBytes();
    const escaped: number[] = [];
    for (let bit = 0; bit < bytes.length * 8; bit++) {
      const b = bytes.slice();
      b[bit >>> 3]! ^= 1 << (bit & 7);
      try {
        BloomFilter.fromBytes(b);
        escaped.push(bit);
      } catch (e) {
        expect(e, `bit ${bit}: ${(e as Error).message}`).toBeInstanceOf(FormatError);
      }
    }
    expect(escaped, 'bit flips that decoded without an error').toEqual([]);
  });
});

// ------------------------------------------------------------------ pure functions

describe('math functions', () => {
  it('sizing functions name the bad parameter (see math.test.ts for the full grid)', () => {
    expectNamed(() => optimalNumOfBits(0, 0.01), RangeError, 'capacity', 0);
    expectNamed(() => optimalNumOfBits(10, 2), RangeError, 'fpp', 2);
    expectNamed(() => optimalNumOfHashFunctions(10, -1), RangeError, 'bits', -1);
    expectNamed(() => bloomSize(Number.NaN, 0.01), RangeError, 'capacity', Number.NaN);
    expectNamed(() => lowerBoundBitsPerKey(0), RangeError, 'fpp', 0);
  });

  it('falsePositiveRate with an infinite n, m or k is a RangeError, not a silent 1, 0 or NaN', () => {
    for (const [n, m, k] of [
      [Number.POSITIVE_INFINITY, 100, 1],
      [1, Number.POSITIVE_INFINITY, 1],
      [1, 100, Number.POSITIVE_INFINITY],
    ] as const) {
      expect(() => falsePositiveRate(n, m, k), `(${n}, ${m}, ${k})`).toThrow(RangeError);
    }
  });

  const counts: [string, number, number, number][] = [
    ['bitCount > bitSize', 11, 10, 1],
    ['negative bitCount', -1, 10, 1],
    ['NaN bitCount', Number.NaN, 10, 1],
    ['bitSize 0', 5, 0, 1],
    ['negative bitSize', 5, -10, 1],
    ['k = 0', 5, 10, 0],
    ['NaN k', 5, 10, Number.NaN],
  ];

  it.each([
    ['expectedFpp', expectedFpp],
    ['estimateCount', estimateCount],
  ] as const)(
    '%s(bitCount, bitSize, k) with impossible arguments is a RangeError, not a number',
    (_n, fn) => {
      for (const [label, c, m, k] of counts) {
        expect(() => fn(c, m, k), `${label}: returned ${String(safe(() => fn(c, m, k)))}`).toThrow(
          RangeError,
        );
      }
    },
  );

  it('bitsPerKey with n = 0 or a negative m is a RangeError', () => {
    expect(() => bitsPerKey(100, 0)).toThrow(RangeError);
    expect(() => bitsPerKey(-1, 5)).toThrow(RangeError);
  });
});

/** fn() or the error it throws. */
function safe(fn: () => unknown): unknown {
  try {
    return fn();
  } catch (e) {
    return e;
  }
}

describe('hashing and checksum helpers', () => {
  it('keyBytes with an unknown funnel is a RangeError naming it (not 64 zero bytes)', () => {
    expectNamed(() => keyBytes('nope' as Funnel, 'x'), RangeError, 'funnel', 'nope');
  });

  it('keyBytes with a wrong key is a TypeError naming funnel and value', () => {
    expectNamed(() => keyBytes('int', 'x'), TypeError, 'int', 'x');
    expectNamed(() => keyBytes('bytes', 'x'), TypeError, 'bytes', 'x');
    expectNamed(() => keyBytes('long', 2 ** 60), RangeError, 'long', 2 ** 60);
  });

  it('murmur3x64_128 of a non-Uint8Array is a TypeError (not a hash of garbage)', () => {
    for (const b of NOT_BYTES) {
      expect(() => murmur3x64_128(b as Uint8Array), shown(b)).toThrow(TypeError);
    }
  });

  it('murmur3x64_128 with a seed that is not a u32 is a RangeError naming seed (1.5 gave [0n, 0n])', () => {
    for (const seed of [1.5, 2 ** 32, Number.NaN, '0']) {
      expectNamed(
        () => murmur3x64_128(new Uint8Array(1), seed as number),
        RangeError,
        'seed',
        seed,
      );
    }
  });

  it('crc32c of a non-Uint8Array is a TypeError (not a checksum of garbage)', () => {
    for (const b of NOT_BYTES) expect(() => crc32c(b as Uint8Array), shown(b)).toThrow(TypeError);
  });

  it('crc32c with a previous crc that is not a 32-bit integer is a RangeError', () => {
    for (const crc of [1.5, 2 ** 32, Number.NaN]) {
      expect(() => crc32c(new Uint8Array(1), crc), String(crc)).toThrow(RangeError);
    }
  });
});

describe('bit storage constructors', () => {
  it.each([0, 65, 100, -64, 1.5, MAX_BITS + 64])(
    'BitArray(%d) is a RangeError naming bits',
    (bits) => {
      expectNamed(() => new BitArray(bits), RangeError, 'bits', bits);
      expectNamed(() => new SharedBitArray(bits), RangeError, 'bits', bits);
    },
  );

  it('data of the wrong length is a RangeError; non-shared data for SharedBitArray a TypeError', () => {
    expect(() => new BitArray(64, new Uint32Array(3))).toThrow(RangeError);
    expect(() => new SharedBitArray(64, new Uint32Array(new SharedArrayBuffer(12)))).toThrow(
      RangeError,
    );
    expect(() => new SharedBitArray(64, new Uint32Array(2))).toThrow(TypeError);
  });

  it('a storage of the wrong size for the shape is refused', () => {
    expect(() => new BloomFilter({ bits: 128, hashes: 2 }, new BitArray(64))).toThrow(RangeError);
  });
});

describe('a value of the wrong class in a message', () => {
  it('is named by its class, not [object Object]', () => {
    const classic = BloomFilter.create({ capacity: 100, fpp: 0.01 });
    const scalable = ScalableBloomFilter.create({ capacity: 100, fpp: 0.01 });
    expect(() => classic.union(scalable as never)).toThrow(
      'other must be a BloomFilter, got a ScalableBloomFilter',
    );
    expect(Object.is(scalable.expectedFpp(), 0)).toBe(true);
  });
});
