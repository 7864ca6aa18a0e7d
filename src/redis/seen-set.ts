/**
 * `RedisSeenSet`: per-user "already seen" sets for feeds, in plain Redis, with a sliding window.
 *
 * Each user has one small Bloom filter per generation (a Redis string bitmap), not one key per
 * item. A generation lasts `period` ms (default one day); the window is the last `generations` of
 * them (default 30: 30 days). `markSeen` writes to the current generation's bitmap; `unseen` checks
 * the candidates against every generation of the window; generations older than the window are
 * never read again and expire on their own (each bitmap has a TTL that ends with its last day in
 * the window). Rotation is by the clock (`now`, injectable for tests): nothing moves data.
 *
 * Keys: `bk:u2:{n:name:user}:g` for generation g = ⌊now / period⌋ (keys.ts: n, the name's
 * length, keeps two sets' users apart). The hash tag puts all of a user's generations in one
 * cluster slot, so each call is one command to one server:
 * `unseen` of 500 candidates is one round trip, whatever the number of generations. Small windows
 * (`memoryPerUser` ≤ `fetchLimit`, 32 KiB) are fetched with one MGET and tested in the client,
 * which costs the server nothing (a Lua loop blocks every other client while it runs); larger
 * ones are tested on the server by a script that answers one character per candidate. (A call
 * that finds a user's window empty also looks once for bitmaps of the first key scheme,
 * `legacyKeys`: one or two more round trips, only then.)
 *
 * Sizing, for `capacity` c items seen per user per generation, window `fpp` p and G generations:
 *
 *     q = 1 − (1 − p)^(1/G)        each generation's rate, so that an item never seen is
 *                                  reported seen (by any of the G filters) with probability ≤ p
 *     m, k = Guava's sizing for (c, q)          (bits per generation bitmap, hashes per item)
 *     memory per user ≤ G · ⌈m / 8⌉ bytes       (+ Redis' per-key overhead: MEMORY USAGE
 *                                                reported 104 bytes a key, Redis 7, 48-byte maps)
 *
 * The bound holds whatever a user does: a bitmap never grows past m bits (SETBIT offsets are < m);
 * a user who sees more than c items in one generation raises that generation's rate instead
 * (`(1 − e^(−k·n/m))^k` for n items), never the memory. A user who saw nothing uses no memory.
 *
 * Positions: MurmurHash3 x64 128 of the item's funnel bytes gives x = h1 mod 2^32 and
 * y = h2 mod 2^32; probe i (0 ≤ i < k) is x mod m, then x ← x + y, y ← y + i: enhanced double
 * hashing (Dillinger and Manolios, "Bloom Filters in Probabilistic Verification", FMCAD 2004).
 * Plain double hashing (x + i·y) measured 1.55x the rate here (m = 3,392, k = 12); the enhanced
 * form measured 0.94x. The client sends (x, y) per item, 2 numbers instead of k offsets; the
 * scripts compute the probes (exact in Lua's doubles, as in JavaScript's: all stay below 2^41).
 *
 * A bitmap is created at its full size (⌈m / 8⌉ zero bytes) on its first write, so Redis never
 * grows it (a string grown by SETBIT may be given up to twice the room it needs).
 */

import {
  checkOptions,
  checkPositiveInteger,
  checkProbability,
  FormatError,
  show,
} from '../errors.js';
import type { KeyOf } from '../filters/filter.js';
import { hashKey, views } from '../hash/hasher.js';
import { checkFunnel, type Funnel, type Key } from '../hash/keys.js';
import { bloomSize } from '../math.js';
import type { Persistence } from './durability.js';
import { checkName, isWellFormed, legacySeenKey, seenKey, seenScratchKey } from './keys.js';
import { MARK, MERGE, SEEN } from './seen-scripts.js';
import { type RedisConnection, type RedisFilterConnectionOptions, RedisStore } from './store.js';

/** Options of {@link RedisSeenSet}. */
export interface RedisSeenSetOptions<F extends Funnel = 'string'>
  extends RedisFilterConnectionOptions {
  /** Items a user is expected to see per generation (c). */
  capacity: number;
  /** Rate at which an item never seen is reported seen, over the whole window (p), in (0, 1). */
  fpp: number;
  /** Generations in the window (G). Default 30. */
  generations?: number;
  /** Length of a generation in ms. Default 86,400,000 (one day). */
  period?: number;
  /** Item key encoding. Default `'string'`. */
  funnel?: F;
  /** The clock, ms since the epoch. Default `Date.now`. */
  now?: () => number;
  /**
   * `seen` fetches the window's bitmaps and tests them here when they are at most this many
   * bytes (`memoryPerUser`), else tests them on the server with a script. Default 32,768.
   */
  fetchLimit?: number;
  /**
   * Bitmaps kept under the first key scheme (`bk:u:{name:user}:g`, before the scheme of keys.ts):
   * `'migrate'` (the default) merges them into the user's window the first time a call finds that
   * window empty (one more round trip then, and on every call while it stays empty); `'ignore'`
   * never looks (items seen before the upgrade are offered again; the old keys expire with their
   * window). Set `'ignore'` once a window's length has passed since the upgrade.
   */
  legacyKeys?: 'migrate' | 'ignore';
}

/** Per-user sliding-window "seen" sets in Redis. See the module comment. */
export class RedisSeenSet<F extends Funnel = 'string'> {
  /** Generations in the window (G). */
  readonly generations: number;
  /** Length of a generation in ms. */
  readonly period: number;
  /** Bits per generation bitmap (m). */
  readonly bits: number;
  /** Probes per item (k). */
  readonly hashes: number;
  readonly funnel: Funnel;
  readonly #name: string;
  readonly #store: RedisStore;
  readonly #now: () => number;
  readonly #fetchLimit: number;
  readonly #legacy: boolean;
  /** The server's check (eviction, persistence: durability.ts), made by the first call. */
  #checked: Promise<void> | undefined;

  constructor(client: RedisConnection, name: string, options: RedisSeenSetOptions<F>) {
    this.#name = checkName(name);
    checkOptions('options', options);
    const capacity = checkPositiveInteger('options.capacity', options.capacity);
    const fpp = checkProbability('options.fpp', options.fpp);
    this.generations = checkPositiveInteger('options.generations', options.generations ?? 30, 1024);
    this.period = checkPositiveInteger('options.period', options.period ?? 86_400_000);
    this.funnel = checkFunnel(options.funnel ?? 'string');
    const now = options.now ?? Date.now;
    if (typeof now !== 'function') {
      throw new TypeError(`options.now must be a function, got ${show(now)}`);
    }
    this.#now = now;
    const limit = options.fetchLimit ?? 32_768;
    if (typeof limit !== 'number' || !(limit >= 0)) {
      throw new RangeError(`options.fetchLimit must be a number of bytes >= 0, got ${show(limit)}`);
    }
    this.#fetchLimit = limit;
    const legacy = options.legacyKeys ?? 'migrate';
    if (legacy !== 'migrate' && legacy !== 'ignore') {
      throw new RangeError(`options.legacyKeys must be 'migrate' or 'ignore', got ${show(legacy)}`);
    }
    this.#legacy = legacy === 'migrate';
    const perGeneration = -Math.expm1(Math.log1p(-fpp) / this.generations);
    const size = bloomSize(capacity, perGeneration);
    if (size.bits > 2 ** 32) {
      throw new RangeError(
        `options.capacity ${capacity} at fpp ${fpp} needs ${size.bits} bits per generation; a Redis string holds at most 2^32`,
      );
    }
    this.bits = size.bits;
    this.hashes = size.hashes;
    this.#store = new RedisStore(client, `RedisSeenSet ${show(name)}`, options);
  }

  /**
   * The most bytes of bitmap one user can occupy: G · ⌈m / 8⌉ (Redis adds its own per-key
   * overhead, about 100 bytes for each of the G keys).
   */
  get memoryPerUser(): number {
    return this.generations * Math.ceil(this.bits / 8);
  }

  /** The weakest persistence of the server's masters, once the first call read it (durability.ts). */
  get persistence(): Persistence | undefined {
    return this.#store.store.persistence;
  }

  /** The current generation number, ⌊now / period⌋. */
  generation(): number {
    return Math.floor(this.#now() / this.period);
  }

  /** The Redis key of `user`'s bitmap for generation `g`. */
  key(user: string, g: number): string {
    return seenKey(this.#name, user, g);
  }

  /** Marks `items` seen by `user` now; resolves to how many were new to the window's newest generation. */
  async markSeen(user: string, items: Iterable<KeyOf<F>>): Promise<number> {
    checkUser(user);
    const pairs = this.#hashes(items);
    if (pairs.length === 0) return 0;
    const args = Array.from(pairs, (v) => String(v));
    const g = this.generation();
    // The bitmap is read until generation g + G − 1 ends.
    const ttl = (g + this.generations) * this.period - this.#now();
    const keys = this.#window(user, g);
    return this.#store.op('markSeen', async () => {
      const reply = (await (
        await this.#check()
      ).eval(MARK, keys, [
        String(this.hashes),
        String(this.bits),
        String(Math.max(1, Math.ceil(ttl))),
        ...args,
      ])) as unknown[];
      if (Number(reply[1]) === 1) await this.#migrate(user, g, keys);
      return Number(reply[0]);
    });
  }

  /**
   * For each candidate, whether `user` saw it within the window (false positives at rate ≤ fpp).
   * One round trip: when the window's bitmaps are small (`memoryPerUser` ≤ 32 KiB: `fetchLimit`),
   * one MGET brings them and the bits are tested here, which costs the server nothing; above
   * that, a script tests them on the server and answers one character per candidate, so the
   * reply stays small.
   */
  async seen(user: string, candidates: readonly KeyOf<F>[]): Promise<boolean[]> {
    checkUser(user);
    const pairs = this.#hashes(candidates);
    if (candidates.length === 0) return [];
    const g = this.generation();
    const keys = this.#window(user, g);
    // An empty window may have bitmaps under the first key scheme: merged, then asked again.
    const ask = async <T>(send: (store: RedisStore) => Promise<T>, empty: (r: T) => boolean) => {
      const store = await this.#check();
      const reply = await send(store);
      return empty(reply) && (await this.#migrate(user, g, keys)) ? send(store) : reply;
    };
    if (this.memoryPerUser <= this.#fetchLimit) {
      const reply = await this.#store.op('seen', () =>
        ask(
          (store) => store.sendBinary(keys[0]!, ['MGET', ...keys]),
          (r) => Array.isArray(r) && r.every((v) => v === null || v === undefined),
        ),
      );
      return this.#test(reply, pairs, candidates.length);
    }
    const args = Array.from(pairs, (v) => String(v));
    const reply = await this.#store.op('seen', () =>
      ask(
        (store) => store.eval(SEEN, keys, [String(this.hashes), String(this.bits), ...args]),
        (r) => r === null || r === undefined,
      ),
    );
    if (reply === null || reply === undefined)
      return new Array<boolean>(candidates.length).fill(false);
    const flags = String(reply);
    if (flags.length !== candidates.length) {
      throw new FormatError(
        `RedisSeenSet ${show(this.#name)}: the server answered ${flags.length} flags for ${candidates.length} candidates`,
      );
    }
    return Array.from(flags, (c) => c === '1');
  }

  /** The SEEN script's test, here, on the bitmaps an MGET returned. */
  #test(reply: unknown, pairs: Float64Array, count: number): boolean[] {
    if (!Array.isArray(reply) || reply.length !== this.generations) {
      throw new FormatError(
        `RedisSeenSet ${show(this.#name)}: unexpected MGET reply ${show(reply)}`,
      );
    }
    const maps = reply.filter((b): b is Uint8Array => b instanceof Uint8Array);
    const m = this.bits;
    const k = this.hashes;
    const out = new Array<boolean>(count).fill(false);
    for (let c = 0; c < count; c++) {
      for (const map of maps) {
        let x = pairs[2 * c]!;
        let y = pairs[2 * c + 1]!;
        let all = true;
        for (let i = 0; i < k; i++) {
          const o = x % m;
          const byte = map[Math.floor(o / 8)];
          if (byte === undefined || (byte & (0x80 >>> (o % 8))) === 0) {
            all = false;
            break;
          }
          x += y;
          y += i;
        }
        if (all) {
          out[c] = true;
          break;
        }
      }
    }
    return out;
  }

  /** The candidates `user` has not seen within the window, in order (one round trip). */
  async unseen(user: string, candidates: readonly KeyOf<F>[]): Promise<KeyOf<F>[]> {
    const flags = await this.seen(user, candidates);
    return candidates.filter((_, i) => !flags[i]);
  }

  /** Forgets everything `user` saw (deletes the window's bitmaps). */
  async forget(user: string): Promise<void> {
    checkUser(user);
    const g = this.generation();
    const keys = this.#window(user, g);
    await this.#store.op('forget', () => this.#store.send(keys[0]!, false, ['DEL', ...keys]));
  }

  /**
   * The store, once the server passed the checks every Redis filter's `create` makes (keys with
   * a TTL: `RedisEvictionPolicyError` for `allkeys-*` and `volatile-*` unless `allowEviction`;
   * `RedisPersistenceError` unless `durability: 'best-effort'`), made by the first call (again
   * after a failed one).
   */
  async #check(): Promise<RedisStore> {
    this.#checked ??= this.#store.store.checkDurability(this.#store.label, true);
    try {
      await this.#checked;
    } catch (err) {
      this.#checked = undefined;
      throw err;
    }
    return this.#store;
  }

  /** The keys of `user`'s window at generation `g`, newest first. */
  #window(user: string, g: number): string[] {
    return Array.from({ length: this.generations }, (_, i) => this.key(user, g - i));
  }

  /**
   * Merges `user`'s bitmaps of the first key scheme, if any, into its window `keys` (unless
   * `legacyKeys: 'ignore'`): one MGET of the old keys (one slot), one MERGE script on the new
   * slot, each bitmap with the TTL its generation has. The old keys are left to expire (a name
   * under the old scheme may hold two users' items: it is copied to both). True if any existed.
   */
  async #migrate(user: string, g: number, keys: readonly string[]): Promise<boolean> {
    if (!this.#legacy) return false;
    const old = Array.from({ length: this.generations }, (_, i) =>
      legacySeenKey(this.#name, user, g - i),
    );
    const maps = (await this.#store.sendBinary(old[0]!, ['MGET', ...old])) as unknown[];
    if (!maps.some((v) => v instanceof Uint8Array)) return false;
    const now = this.#now();
    const args = maps.flatMap((v, i) =>
      v instanceof Uint8Array
        ? [Buffer.from(v), String(Math.ceil((g - i + this.generations) * this.period - now))]
        : ['', '0'],
    );
    await this.#store.eval(MERGE, [...keys, seenScratchKey(this.#name, user)], args);
    return true;
  }

  /** (x, y) of each item, hashing every item before anything is sent. */
  #hashes(items: Iterable<KeyOf<F>>): Float64Array {
    const list = Array.isArray(items) ? items : Array.from(items);
    const out = new Float64Array(2 * list.length);
    for (let i = 0; i < list.length; i++) {
      hashKey(this.funnel, list[i] as Key);
      const h = views.hash;
      out[2 * i] = h[0]! >>> 0;
      out[2 * i + 1] = h[2]! >>> 0;
    }
    return out;
  }
}

/** A user is any non-empty, well-formed string (keys.ts: `seenKey`). */
function checkUser(user: unknown): void {
  if (typeof user !== 'string' || user.length === 0) {
    throw new TypeError(`user must be a non-empty string, got ${show(user)}`);
  }
  if (!isWellFormed(user)) {
    throw new RangeError(
      `user must be well-formed Unicode (a lone surrogate would be sent as U+FFFD and share keys with other users), got ${show(user)}`,
    );
  }
}
