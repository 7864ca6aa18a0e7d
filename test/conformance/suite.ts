/**
 * The shared conformance suite: every filter type and every backend runs these same checks
 * (hono's common.case.test.ts pattern). A new filter joins with a few lines:
 *
 *   runConformance({ name: 'BloomFilter', create: (o) => adapt(BloomFilter.create(o)), ... });
 *
 * The adapter methods may return promises, so Redis-backed filters run the same suite.
 */
import { describe, expect, it } from 'vitest';
import { keys } from '../support/random.js';

type MaybePromise<T> = T | Promise<T>;

/** A filter under test, seen through string keys. */
export interface FilterAdapter {
  add(key: string): MaybePromise<boolean>;
  has(key: string): MaybePromise<boolean>;
  /** Removes a key (deletable filters only). */
  remove?(key: string): MaybePromise<boolean>;
  /** Forgets every key. */
  clear?(): MaybePromise<void>;
  /** Serializes and reads back (native format, or export/import for stores). */
  roundTrip?(): MaybePromise<FilterAdapter>;
  /** Adds a key of the wrong kind (e.g. a number to a string filter): must throw a TypeError. */
  addWrongKind?(): MaybePromise<unknown>;
  /** Releases resources (connections, keys). */
  dispose?(): MaybePromise<void>;
  /**
   * The rate the filter's own model predicts for its current state (e.g. `expectedFpp()`): the
   * suite checks the measured rate against it from both sides.
   */
  expectedFpp?(): MaybePromise<number>;
}

/** Capabilities a target may lack; each lack is a visible skip with its reason. */
export type Capability = 'add' | 'clear' | 'remove' | 'roundTrip' | 'wrongKind' | 'createRaw';

export interface ConformanceTarget {
  name: string;
  /** Makes an empty filter for `capacity` keys at rate `fpp` (string keys). */
  create?(options: { capacity: number; fpp: number }): MaybePromise<FilterAdapter>;
  /** Builds a filter holding exactly `keys` (build-once types; growable types use `create`). */
  build?(options: { capacity: number; fpp: number }, keys: string[]): MaybePromise<FilterAdapter>;
  /** What the target cannot do, with the reason shown in the skip. */
  lacks?: Partial<Record<Capability, string>>;
  /** Tolerance of the model rate itself, relative (default 0.05: the models are near exact). */
  modelSlack?: number;
  /** Calls the type's factory with raw (possibly bad) options; used to check input validation. */
  createRaw?(options: Record<string, unknown>): MaybePromise<unknown>;
  /** Whether `add` returns true exactly when the filter changed (Guava's put contract). */
  addReportsChange?: boolean;
  /** Multiplier on the target fpp that the measured rate must stay under (default 1.5 plus noise). */
  fppSlack?: number;
  /** Keys to use in the heavier checks (default 20,000). */
  scale?: number;
}

/** A filter holding `present`: built at once, or created and filled key by key. */
async function filled(
  target: ConformanceTarget,
  options: { capacity: number; fpp: number },
  present: string[],
): Promise<FilterAdapter> {
  if (target.build !== undefined) return target.build(options, present);
  const f = await make(target, options);
  for (const k of present) await f.add(k);
  return f;
}

async function make(
  target: ConformanceTarget,
  options: { capacity: number; fpp: number },
): Promise<FilterAdapter> {
  if (target.create === undefined) throw new Error(`${target.name} has neither create nor build`);
  return target.create(options);
}

export function runConformance(target: ConformanceTarget): void {
  const n = target.scale ?? 20_000;
  const fpp = 0.01;
  const lacks = target.lacks ?? {};
  const canAdd = target.create !== undefined && lacks.add === undefined;
  /** `it`, or a visible skip naming the missing capability and why. */
  const itIf = (need: Capability, title: string, body: () => Promise<void>): void => {
    const reason = need === 'add' && !canAdd ? (lacks.add ?? 'build-once type') : lacks[need];
    if (reason !== undefined) it.skip(`${title} [lacks ${need}: ${reason}]`, body);
    else it(title, body);
  };

  describe(`${target.name} conformance`, () => {
    it('never gives a false negative', async () => {
      const present = keys('present', n);
      const f = await filled(target, { capacity: n, fpp }, present);
      try {
        for (const k of present) expect(await f.has(k), k).toBe(true);
      } finally {
        await f.dispose?.();
      }
    });

    it("keeps the false positive rate at its target and at its own model's prediction", async () => {
      const f = await filled(target, { capacity: n, fpp }, keys('present', n));
      try {
        const probes = 4 * n;
        let fp = 0;
        for (const k of keys('absent', probes)) if (await f.has(k)) fp++;
        const rate = fp / probes;
        // Binomial 4-sigma band around the target, widened by the type's slack.
        const limit = fpp * (target.fppSlack ?? 1.5) + 4 * Math.sqrt((fpp * (1 - fpp)) / probes);
        expect(rate).toBeLessThan(limit);
        // Two-sided: within 4 sigma of what the filter's own model says for its state.
        if (f.expectedFpp !== undefined) {
          const model = await f.expectedFpp();
          const sigma = Math.sqrt((model * (1 - model)) / probes);
          const slack = model * (target.modelSlack ?? 0.05);
          expect(Math.abs(rate - model), `measured ${rate} vs model ${model}`).toBeLessThanOrEqual(
            4 * sigma + slack + 1 / probes,
          );
        }
      } finally {
        await f.dispose?.();
      }
    });

    it('answers false for everything when empty', async () => {
      const f =
        target.create !== undefined
          ? await make(target, { capacity: 1000, fpp })
          : await filled(target, { capacity: 1000, fpp }, []);
      try {
        for (const k of keys('absent', 1000)) expect(await f.has(k)).toBe(false);
      } finally {
        await f.dispose?.();
      }
    });

    if (target.addReportsChange !== false) {
      itIf(
        'add',
        'add returns the opposite of a prior has (Guava testPutReturnValue)',
        async () => {
          const f = await make(target, { capacity: 2000, fpp });
          try {
            for (const k of keys('k', 2000)) {
              const before = await f.has(k);
              const changed = await f.add(k);
              expect(changed).toBe(!before);
              expect(await f.add(k)).toBe(false);
            }
          } finally {
            await f.dispose?.();
          }
        },
      );
    }

    itIf(
      'roundTrip',
      'round-trips through its serialized form with identical answers',
      async () => {
        const present = keys('present', 5000);
        const f = await filled(target, { capacity: 5000, fpp }, present);
        try {
          expect(f.roundTrip, 'roundTrip (or declare it lacking)').toBeDefined();
          const g = await f.roundTrip!();
          try {
            for (const k of present) expect(await g.has(k)).toBe(true);
            for (const k of keys('absent', 5000)) expect(await g.has(k)).toBe(await f.has(k));
          } finally {
            if (g !== f) await g.dispose?.();
          }
        } finally {
          await f.dispose?.();
        }
      },
    );

    itIf('clear', 'forgets everything on clear', async () => {
      const f = await filled(target, { capacity: 1000, fpp }, keys('present', 1000));
      try {
        expect(f.clear, 'clear (or declare it lacking)').toBeDefined();
        await f.clear!();
        let hits = 0;
        for (const k of keys('present', 1000)) if (await f.has(k)) hits++;
        expect(hits).toBe(0);
      } finally {
        await f.dispose?.();
      }
    });

    itIf('remove', 'removes keys without creating false negatives for the others', async () => {
      const all = keys('present', 4000);
      const f = await filled(target, { capacity: 4000, fpp }, all);
      try {
        expect(f.remove, 'remove (or declare it lacking)').toBeDefined();
        for (const k of all.slice(0, 2000)) expect(await f.remove!(k)).toBe(true);
        for (const k of all.slice(2000)) expect(await f.has(k)).toBe(true);
        let still = 0;
        for (const k of all.slice(0, 2000)) if (await f.has(k)) still++;
        expect(still).toBeLessThan(200);
      } finally {
        await f.dispose?.();
      }
    });

    itIf('wrongKind', 'rejects a key of the wrong kind with a TypeError', async () => {
      const f = await filled(target, { capacity: 100, fpp }, keys('present', 100));
      try {
        expect(f.addWrongKind, 'addWrongKind (or declare it lacking)').toBeDefined();
        await expect((async () => f.addWrongKind!())()).rejects.toBeInstanceOf(TypeError);
      } finally {
        await f.dispose?.();
      }
    });

    itIf(
      'createRaw',
      'rejects bad capacity and fpp with a RangeError naming the value',
      async () => {
        expect(target.createRaw, 'createRaw (or declare it lacking)').toBeDefined();
        const bad: [Record<string, unknown>, RegExp][] = [
          [{ capacity: 0, fpp: 0.01 }, /capacity.*0/],
          [{ capacity: -5, fpp: 0.01 }, /capacity.*-5/],
          [{ capacity: 1.5, fpp: 0.01 }, /capacity.*1\.5/],
          [{ capacity: Number.NaN, fpp: 0.01 }, /capacity.*NaN/],
          [{ capacity: 100, fpp: 0 }, /fpp.*0/],
          [{ capacity: 100, fpp: 1 }, /fpp.*1/],
          [{ capacity: 100, fpp: 1.5 }, /fpp.*1\.5/],
          [{ capacity: 100, fpp: Number.NaN }, /fpp.*NaN/],
          [{ capacity: 100, fpp: Number.POSITIVE_INFINITY }, /fpp.*Infinity/],
        ];
        for (const [options, message] of bad) {
          const attempt = (async () => target.createRaw!(options))();
          await expect(attempt, JSON.stringify(options)).rejects.toThrow(RangeError);
          await expect((async () => target.createRaw!(options))()).rejects.toThrow(message);
        }
      },
    );
  });
}
