/**
 * The property every reader of outside bytes must keep, checked with fast-check over seeded
 * inputs: for any bytes, the reader returns a usable filter (one that answers queries) or throws
 * `FormatError`; never another error, never a hang, never an allocation out of proportion.
 *
 * Inputs are the reader's valid seeds put through 1-4 mutations (flip a byte, set a byte or a
 * 32-bit field to an edge value, truncate, insert or delete bytes), each followed half the time
 * by the reader's `resign` (checksums recomputed, so that forged fields reach the checks behind
 * the checksum), plus raw random bytes. The bounds, per input:
 *   - time: {@link TIME_LIMIT_MS} (a hang detector: inputs take microseconds to milliseconds);
 *   - memory: the growth of live array buffers and external memory across the call, at most
 *     {@link ALLOCATION_BASE} + {@link ALLOCATION_PER_BYTE} × the input's length. (Measured when
 *     the call returns, so memory freed inside the call is not seen; what a reader keeps, or
 *     allocates for a declared size it never checked, is.)
 */
import fc from 'fast-check';
import { FormatError } from '../../src/index.js';

export const TIME_LIMIT_MS = 5000;
export const ALLOCATION_BASE = 32 * 2 ** 20;
export const ALLOCATION_PER_BYTE = 64;

/** One reader of outside bytes, as the fuzz table lists it. */
export interface FuzzReader {
  readonly name: string;
  /** Valid inputs to mutate (made once, shared by every run). */
  seeds(): Promise<readonly Uint8Array[]>;
  /**
   * Reads `bytes` and uses what it read (queries, verification): resolves when the bytes were
   * accepted, throws `FormatError` when they were rejected.
   */
  read(bytes: Uint8Array): Promise<void> | void;
  /** Recomputes the checksums of a mutated input, where the format has any. */
  resign?(bytes: Uint8Array): Uint8Array;
  /** Inputs always tried (found problems, kept as regressions). */
  known?(): Promise<readonly Uint8Array[]> | readonly Uint8Array[];
  /** Frees what the reader made (temporary files). */
  close?(): Promise<void>;
}

/** What one fuzz run saw. */
export interface FuzzStats {
  reader: string;
  tried: number;
  accepted: number;
  rejected: number;
  slowestMs: number;
  /** Largest growth of live array buffers + external memory across one call, in bytes. */
  largestAllocation: number;
}

type Mutation =
  | { kind: 'flip'; at: number; xor: number }
  | { kind: 'byte'; at: number; value: number }
  | { kind: 'u32'; at: number; value: number; littleEndian: boolean }
  | { kind: 'truncate'; at: number }
  | { kind: 'insert'; at: number; bytes: Uint8Array }
  | { kind: 'delete'; at: number; count: number };

const EDGE_BYTES = [0x00, 0x01, 0x7f, 0x80, 0xff, 0x0f, 0xf0];
const EDGE_U32 = [
  0,
  1,
  2,
  7,
  0x7f,
  0xff,
  0xffff,
  2 ** 22,
  2 ** 22 + 1,
  2 ** 31 - 1,
  2 ** 31,
  2 ** 32 - 1,
];

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({
    kind: fc.constant('flip' as const),
    at: fc.nat(),
    xor: fc.integer({ min: 1, max: 255 }),
  }),
  fc.record({
    kind: fc.constant('byte' as const),
    at: fc.nat(),
    value: fc.constantFrom(...EDGE_BYTES),
  }),
  fc.record({
    kind: fc.constant('u32' as const),
    at: fc.nat(),
    value: fc.constantFrom(...EDGE_U32),
    littleEndian: fc.boolean(),
  }),
  fc.record({ kind: fc.constant('truncate' as const), at: fc.nat() }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    bytes: fc.uint8Array({ minLength: 1, maxLength: 16 }),
  }),
  fc.record({
    kind: fc.constant('delete' as const),
    at: fc.nat(),
    count: fc.integer({ min: 1, max: 16 }),
  }),
);

function apply(bytes: Uint8Array, m: Mutation): Uint8Array {
  if (bytes.length === 0) return m.kind === 'insert' ? m.bytes.slice() : bytes;
  const at = m.at % bytes.length;
  switch (m.kind) {
    case 'flip': {
      const out = bytes.slice();
      out[at]! ^= m.xor;
      return out;
    }
    case 'byte': {
      const out = bytes.slice();
      out[at] = m.value;
      return out;
    }
    case 'u32': {
      const out = bytes.slice();
      const start = Math.min(at, Math.max(0, out.length - 4));
      const view = new DataView(out.buffer, out.byteOffset, out.length);
      if (out.length >= 4) view.setUint32(start, m.value, m.littleEndian);
      return out;
    }
    case 'truncate':
      return bytes.slice(0, at);
    case 'insert': {
      const out = new Uint8Array(bytes.length + m.bytes.length);
      out.set(bytes.subarray(0, at));
      out.set(m.bytes, at);
      out.set(bytes.subarray(at), at + m.bytes.length);
      return out;
    }
    case 'delete': {
      const end = Math.min(bytes.length, at + m.count);
      const out = new Uint8Array(bytes.length - (end - at));
      out.set(bytes.subarray(0, at));
      out.set(bytes.subarray(end), at);
      return out;
    }
  }
}

/** An arbitrary of inputs for a reader with these seeds. */
function inputs(seeds: readonly Uint8Array[], resign?: (b: Uint8Array) => Uint8Array) {
  const mutated = fc
    .record({
      seed: fc.nat({ max: seeds.length - 1 }),
      mutations: fc.array(mutation, { minLength: 1, maxLength: 4 }),
      resign: fc.boolean(),
    })
    .map(({ seed, mutations, resign: fix }) => {
      let bytes = seeds[seed]!;
      for (const m of mutations) bytes = apply(bytes, m);
      if (fix && resign !== undefined) {
        try {
          bytes = resign(bytes);
        } catch {
          // Too damaged to re-sign: the mutated bytes as they are.
        }
      }
      return bytes;
    });
  return fc.oneof(
    { weight: 9, arbitrary: mutated },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 512 }) },
  );
}

function liveBytes(): number {
  const m = process.memoryUsage();
  return m.arrayBuffers + m.external;
}

/**
 * Runs `numRuns` seeded inputs through `reader`; throws (with fast-check's shrunk counterexample)
 * on the first input that breaks the property or a bound.
 */
export async function fuzz(reader: FuzzReader, numRuns: number, seed: number): Promise<FuzzStats> {
  const seeds = await reader.seeds();
  for (const s of seeds) await reader.read(s); // every seed is accepted as it is
  const stats: FuzzStats = {
    reader: reader.name,
    tried: 0,
    accepted: 0,
    rejected: 0,
    slowestMs: 0,
    largestAllocation: 0,
  };
  const check = async (bytes: Uint8Array): Promise<void> => {
    const before = liveBytes();
    const start = performance.now();
    let accepted: boolean;
    try {
      await reader.read(bytes);
      accepted = true;
    } catch (error) {
      if (!(error instanceof FormatError)) throw error;
      accepted = false;
    }
    const ms = performance.now() - start;
    const grown = liveBytes() - before;
    stats.tried++;
    if (accepted) stats.accepted++;
    else stats.rejected++;
    stats.slowestMs = Math.max(stats.slowestMs, ms);
    stats.largestAllocation = Math.max(stats.largestAllocation, grown);
    if (ms > TIME_LIMIT_MS) {
      throw new Error(`${reader.name}: ${ms.toFixed(0)} ms for ${bytes.length} bytes`);
    }
    const limit = ALLOCATION_BASE + ALLOCATION_PER_BYTE * bytes.length;
    if (grown > limit) {
      throw new Error(
        `${reader.name}: ${grown} bytes allocated for ${bytes.length} bytes of input`,
      );
    }
  };
  try {
    for (const bytes of (await reader.known?.()) ?? []) await check(bytes);
    await fc.assert(fc.asyncProperty(inputs(seeds, reader.resign), check), {
      numRuns,
      seed,
    });
  } finally {
    await reader.close?.();
  }
  return stats;
}
