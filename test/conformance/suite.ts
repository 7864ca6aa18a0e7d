/**
 * The shared conformance suite: every filter type and every backend runs these same checks
 * (hono's common.case.test.ts pattern). A new filter joins with a few lines:
 *
 *   runConformance({ name: 'BloomFilter', create: (o) => adapt(BloomFilter.create(o)), ... });
 *
 * The adapter methods may return promises, so Redis-backed filters run the same suite.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { expectSameArray } from '../support/bytes.js';
import { keys as makeKeys } from '../support/random.js';

type MaybePromise<T> = T | Promise<T>;

/** A filter under test, seen through string keys. */
export interface FilterAdapter {
  add(key: string): MaybePromise<boolean>;
  has(key: string): MaybePromise<boolean>;
  /**
   * Answers for many keys at once (the target's batch API), offered where a `has` is a network
   * round trip, or where the batch API is what the target tests: the checks then ask all their
   * keys through it, and `has`, key by key, on the first `perKey` of them (1,000 unless the
   * target says; the false positive check also on every key the batch answered true), and the
   * two answers must agree there.
   */
  hasMany?(keys: readonly string[]): MaybePromise<boolean[]>;
  /**
   * Adds many keys at once (the target's batch API), offered with `hasMany`: the suite fills its
   * filters through it (add, key by key, is checked on its own).
   */
  addMany?(keys: readonly string[]): MaybePromise<unknown>;
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
  /**
   * The filter's saturation figure (`saturation()`: design capacity and rate, the rate now, their
   * ratio, saturated past 10): offered by the in-memory growable types.
   */
  saturation?(): MaybePromise<SaturationFigure>;
}

/** What `saturation()` answers (src/filters/base.ts `Saturation`). */
export interface SaturationFigure {
  designCapacity: number;
  designFpp: number;
  currentFpp: number;
  ratio: number;
  saturated: boolean;
}

/** Capabilities a target may lack; each lack is a visible skip with its reason. */
export type Capability = 'add' | 'clear' | 'remove' | 'roundTrip' | 'wrongKind' | 'createRaw';

export interface ConformanceTarget {
  name: string;
  /** Makes an empty filter for `capacity` keys at rate `fpp` (string keys). */
  create?(options: { capacity: number; fpp: number }): MaybePromise<FilterAdapter>;
  /** Builds a filter holding exactly `keys` (build-once types; growable types use `create`). */
  build?(
    options: { capacity: number; fpp: number },
    keys: readonly string[],
  ): MaybePromise<FilterAdapter>;
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
  /**
   * Where the adapter has `hasMany`: how many keys of each check `has` also answers key by key
   * (default 1,000; see `answers`).
   */
  perKey?: number;
}

/**
 * The suite's key lists, made once per (prefix, count) and shared by every check and target that
 * asks for the same list (the checks only read them): the in-memory run asks for the same 20,000
 * present and 80,000 absent keys in every one of its targets. Held weakly: a worker that runs
 * other files next lets the collector take them back.
 */
const keyLists = new Map<string, WeakRef<readonly string[]>>();

/** `prefix:0` ... `prefix:n-1` (test/support/random.ts `keys`), shared: do not modify. */
function keys(prefix: string, n: number): readonly string[] {
  const id = `${prefix}/${n}`;
  let list = keyLists.get(id)?.deref();
  if (list === undefined) {
    list = makeKeys(prefix, n);
    keyLists.set(id, new WeakRef(list));
  }
  return list;
}

/** Calls in flight at once for an async target (the Redis clients pipeline them). */
const WINDOW = 256;

/**
 * Calls `fn` on every key and returns its results, in order: key by key for a sync target; an
 * async target gets a window of calls in flight at once, so a suite of 100,000 calls costs a few
 * hundred round trips, not 100,000. Each call is still the per-key API (`add`/`has`), which is
 * what the suite checks.
 */
async function each<T>(
  list: readonly string[],
  fn: (key: string) => MaybePromise<T>,
): Promise<T[]> {
  const out = new Array<T>(list.length);
  let i = 0;
  while (i < list.length) {
    const first = fn(list[i]!);
    if (!(first instanceof Promise)) {
      out[i++] = first;
      continue;
    }
    const end = Math.min(list.length, i + WINDOW);
    const pending: MaybePromise<T>[] = [first];
    for (let j = i + 1; j < end; j++) pending.push(fn(list[j]!));
    const results = await Promise.all(pending);
    for (let j = i; j < end; j++) out[j] = results[j - i]!;
    i = end;
  }
  return out;
}

/** `has` of every key of `list`, key by key, in order. */
function hasEach(f: FilterAdapter, list: readonly string[]): Promise<boolean[]> {
  return each(list, (k) => f.has(k));
}

/** The answers for `list`: in one batch where the adapter has one, else key by key. */
async function answersFor(f: FilterAdapter, list: readonly string[]): Promise<boolean[]> {
  return f.hasMany !== undefined ? f.hasMany(list) : hasEach(f, list);
}

/**
 * The answers for every key of `list`, and `has` asked key by key: for all of them where the
 * adapter has no batch API; where it has one (a network backend, where each `has` is a command,
 * or a batch API under test), the batch answers all of them and `has` the first `perKey` and,
 * with `positives`, every other key the batch answered true (a false positive check's rare
 * positives, which the first keys may not include), and the two must agree there. On a store a
 * `has` is a window of one key through the batch's code: past the keys that reach every shard,
 * more keys asked one by one repeat the same command.
 */
async function answers(
  f: FilterAdapter,
  list: readonly string[],
  perKey: number,
  positives = false,
): Promise<boolean[]> {
  if (f.hasMany === undefined) return hasEach(f, list);
  const first = list.slice(0, perKey);
  if (!positives) {
    const [all, oneByOne] = await Promise.all([f.hasMany(list), hasEach(f, first)]);
    expect(all).toHaveLength(list.length);
    expectSameArray(all.slice(0, oneByOne.length), oneByOne);
    return all;
  }
  const all = await f.hasMany(list);
  expect(all).toHaveLength(list.length);
  const asked = [...first.keys()];
  for (let i = first.length; i < list.length; i++) if (all[i]) asked.push(i);
  const oneByOne = await hasEach(
    f,
    asked.map((i) => list[i]!),
  );
  expectSameArray(
    asked.map((i) => all[i]!),
    oneByOne,
  );
  return all;
}

/** The keys of `list` answered false (at most 10, for the failure message). */
function falseFor(list: readonly string[], answered: readonly boolean[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < list.length && out.length < 10; i++) if (!answered[i]) out.push(list[i]!);
  return out;
}

/** How many answers are true. */
function hits(answered: readonly boolean[]): number {
  let n = 0;
  for (const a of answered) if (a) n++;
  return n;
}

/** A filter holding `present`: built at once, or created and filled key by key. */
async function filled(
  target: ConformanceTarget,
  options: { capacity: number; fpp: number },
  present: readonly string[],
): Promise<FilterAdapter> {
  if (target.build !== undefined) return target.build(options, present);
  const f = await make(target, options);
  if (f.addMany !== undefined) await f.addMany(present);
  else await each(present, (k) => f.add(k));
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
  const perKey = target.perKey ?? 1000;
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
    // The filter holding n keys at its capacity, built once for the two checks that only read it.
    let atCapacity: Promise<FilterAdapter> | undefined;
    const holdingN = () => {
      atCapacity ??= filled(target, { capacity: n, fpp }, keys('present', n));
      return atCapacity;
    };
    afterAll(async () => {
      await atCapacity?.then(
        (f) => f.dispose?.(),
        () => undefined, // the test that built it has reported the error
      );
    });

    it('never gives a false negative', async () => {
      const f = await holdingN();
      const present = keys('present', n);
      expect(falseFor(present, await answers(f, present, perKey))).toEqual([]);
    });

    it("keeps the false positive rate at its target and at its own model's prediction", async () => {
      const f = await holdingN();
      // 4n probes, and at least 4,000 (filters of 500 keys keep the band of 1,000-key ones).
      const probes = 4 * Math.max(n, 1000);
      // Batch answers are checked against has's on their first keys and on every false positive.
      const rate = hits(await answers(f, keys('absent', probes), perKey, true)) / probes;
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
    });

    it('knows its design point, and says it is saturated far past it (or refuses keys)', async (ctx) => {
      if (!canAdd) return ctx.skip();
      const f = await make(target, { capacity: 1000, fpp });
      try {
        if (f.saturation === undefined) return ctx.skip();
        const empty = await f.saturation();
        expect(Math.abs(empty.currentFpp) + Math.abs(empty.ratio)).toBe(0);
        expect(empty.saturated).toBe(false);
        // The design point, read from the shape: no worse than what it was made for (1,000 keys
        // at 1%), with the slack of a shape that keeps no rate (a split-block filter).
        expect(empty.designFpp).toBeGreaterThan(0);
        expect(empty.designFpp).toBeLessThan(fpp * 4);
        if (empty.designCapacity === Number.POSITIVE_INFINITY) {
          // A filter that grows: its rate stays below its target, whatever it holds.
          for (const k of keys('sat', 10_000)) await f.add(k);
          expect(await f.saturation()).toMatchObject({ saturated: false });
          expect((await f.saturation()).ratio).toBeLessThan(1);
          return;
        }
        expect(empty.designCapacity).toBeGreaterThanOrEqual(900);
        expect(empty.designCapacity).toBeLessThan(3000);
        const all = keys('sat', Math.ceil(empty.designCapacity) * 8);
        const atDesign = all.slice(0, Math.ceil(empty.designCapacity));
        for (const k of atDesign) await f.add(k);
        const there = await f.saturation();
        expect(there.saturated).toBe(false);
        expect(there.ratio).toBeGreaterThan(0.25);
        expect(there.ratio).toBeLessThan(4);
        let refused = false;
        try {
          for (const k of all.slice(atDesign.length)) await f.add(k);
        } catch (error) {
          // A filter that cannot take more keys says so instead of saturating.
          expect((error as Error).name).toBe('FilterFullError');
          refused = true;
        }
        const past = await f.saturation();
        expect(past.saturated).toBe(!refused);
        if (!refused) expect(past.ratio).toBeGreaterThan(10);
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
        expect(hits(await answers(f, keys('absent', 1000), perKey))).toBe(0);
      } finally {
        await f.dispose?.();
      }
    });

    if (target.addReportsChange !== false) {
      itIf(
        'add',
        'add returns the opposite of a prior has (Guava testPutReturnValue)',
        async () => {
          // Key by key, each add awaited (a concurrent add could set a key's last bit between
          // its has and its add); fewer keys where each call is a round trip (n / 8, at most
          // 2,000: 625 in the shard store, 250 on a standalone Redis, 125 and 63 on the cluster).
          // Four filters, each a quarter of the keys at a quarter of the capacity of 2,000 (the
          // fill of one filter with all of them), run side by side: a filter's keys stay strictly
          // one after another, and the round trips overlap.
          const chains = 4;
          const perChain = Math.ceil(Math.min(2000, n / 8) / chains);
          const filters: FilterAdapter[] = [];
          try {
            for (let c = 0; c < chains; c++) {
              filters.push(await make(target, { capacity: 2000 / chains, fpp }));
            }
            const wrong: string[] = [];
            await Promise.all(
              filters.map(async (f, c) => {
                for (const k of keys(`k${c}`, perChain)) {
                  const before = await f.has(k);
                  const changed = await f.add(k);
                  const again = await f.add(k);
                  if (changed === before || again)
                    wrong.push(`${k}: has ${before}, add ${changed}, ${again}`);
                }
              }),
            );
            expect(wrong).toEqual([]);
          } finally {
            for (const f of filters) await f.dispose?.();
          }
        },
      );
    }

    itIf(
      'roundTrip',
      'round-trips through its serialized form with identical answers',
      async () => {
        const present = keys('present', Math.min(5000, n));
        // At n <= 5,000 keys that is the filter the two read-only checks above share (the same
        // keys at the same capacity): read it, do not build it again. A round trip only reads.
        const shared = present.length === n;
        const f = shared
          ? await holdingN()
          : await filled(target, { capacity: present.length, fpp }, present);
        try {
          expect(f.roundTrip, 'roundTrip (or declare it lacking)').toBeDefined();
          const g = await f.roundTrip!();
          try {
            const absent = keys('absent', present.length);
            expect(falseFor(present, await answers(g, present, perKey))).toEqual([]);
            expectSameArray(await answersFor(g, absent), await answersFor(f, absent));
          } finally {
            if (g !== f) await g.dispose?.();
          }
        } finally {
          if (!shared) await f.dispose?.();
        }
      },
    );

    itIf('clear', 'forgets everything on clear', async () => {
      // 1,000 keys (n / 4 on Redis: 500 standalone, 250 on the cluster, 125 for the second
      // client), filled to capacity.
      const size = Math.min(1000, n / 4);
      const f = await filled(target, { capacity: size, fpp }, keys('present', size));
      try {
        expect(f.clear, 'clear (or declare it lacking)').toBeDefined();
        await f.clear!();
        expect(hits(await answers(f, keys('present', size), perKey))).toBe(0);
      } finally {
        await f.dispose?.();
      }
    });

    itIf('remove', 'removes keys without creating false negatives for the others', async () => {
      // 4,000 keys, half of them removed (n on Redis, where each removal is a round trip: 2,000
      // standalone, 1,000 on the cluster, 500 for the second client). Every removal must be
      // acknowledged (each sent key by key) and every kept key held; a removal that cleared
      // nothing would leave nearly all removed keys answering true, against a limit of 10% (the
      // kept half fills the filter to half its capacity: a rate below 1%).
      const size = Math.min(4000, n);
      const half = size / 2;
      const all = keys('present', size);
      const f = await filled(target, { capacity: size, fpp }, all);
      try {
        expect(f.remove, 'remove (or declare it lacking)').toBeDefined();
        const removed = all.slice(0, half);
        const acknowledged = await each(removed, (k) => f.remove!(k));
        expect(removed.filter((_, i) => !acknowledged[i])).toEqual([]);
        const kept = all.slice(half);
        expect(falseFor(kept, await answers(f, kept, perKey))).toEqual([]);
        expect(hits(await answers(f, removed, perKey))).toBeLessThan(half / 10);
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
