/**
 * What a Redis server may lose of a filter, checked at `create` and `open` on every master
 * (shard-store.ts, `checkDurability`): keys it may evict (`maxmemory-policy`, {@link checkEviction})
 * and acknowledged writes a crash may lose, read from its configuration (`CONFIG GET appendonly`,
 * `appendfsync`, `save`, {@link checkPersistence}):
 *
 * | mode           | configuration                      | a crash (kill -9, power loss) loses      |
 * |----------------|------------------------------------|------------------------------------------|
 * | `aof-always`   | appendonly yes, appendfsync always | nothing acknowledged                     |
 * | `aof-everysec` | appendonly yes, appendfsync everysec | up to about the last second (2 s worst) |
 * | `aof-no`       | appendonly yes, appendfsync no     | what the OS had not flushed (~30 s)      |
 * | `rdb`          | appendonly no, save "…"            | everything since the last snapshot       |
 * | `none`         | appendonly no, save ""             | everything                               |
 * | `unknown`      | CONFIG refused (renamed or disabled, as on many managed services) | cannot tell |
 *
 * With `durability: 'strict'` (the default) a filter needs `aof-always` on every master and
 * `create`/`open` reject with `RedisPersistenceError` otherwise, naming what was found and the
 * opt-in; with `durability: 'best-effort'` any mode is accepted and reported
 * (`RedisShardStore.persistence`). A loss after a restart is detected either way when it takes a
 * whole shard (`RedisFilterLostError`), never when it takes the last writes to a shard that
 * survived: that is what the check is for.
 */

import { show } from '../errors.js';
import { RedisEvictionPolicyError, RedisPersistenceError } from './errors.js';
import { toMeta } from './meta.js';

/** The persistence of a server, weakest first (see the module comment). */
export const PERSISTENCE_MODES = [
  'unknown',
  'none',
  'rdb',
  'aof-no',
  'aof-everysec',
  'aof-always',
] as const;
export type PersistenceMode = (typeof PERSISTENCE_MODES)[number];

/** The `durability` option: what a filter requires of the server's persistence. */
export type Durability = 'strict' | 'best-effort';

/** Checks a `durability` option (and the `allowEviction` beside it); returns it. */
export function checkDurabilityOption(value: unknown, allowEviction: unknown = false): Durability {
  if (typeof allowEviction !== 'boolean') {
    throw new TypeError(`allowEviction must be a boolean, got ${show(allowEviction)}`);
  }
  if (value !== 'strict' && value !== 'best-effort') {
    throw new RangeError(`durability must be 'strict' or 'best-effort', got ${show(value)}`);
  }
  return value;
}

/** One server's persistence, and what was read (or why nothing could be). */
export interface Persistence {
  readonly mode: PersistenceMode;
  readonly detail: string;
}

type Send = (args: readonly string[]) => Promise<unknown>;

/** Reads one server's persistence through `send` (never rejects: `unknown` with the reason). */
export async function readPersistence(send: Send): Promise<Persistence> {
  let config: Record<string, string>;
  try {
    const replies = await Promise.all(
      ['appendonly', 'appendfsync', 'save'].map((p) => send(['CONFIG', 'GET', p])),
    );
    config = Object.assign({}, ...replies.map(toMeta));
  } catch (err) {
    return { mode: 'unknown', detail: `CONFIG GET failed: ${(err as Error).message ?? err}` };
  }
  const { appendonly, appendfsync, save } = config;
  if (appendonly === undefined || (appendonly === 'yes' && appendfsync === undefined)) {
    return { mode: 'unknown', detail: `CONFIG GET answered ${show(config)}` };
  }
  if (appendonly === 'yes') {
    const mode = `aof-${appendfsync}` as PersistenceMode;
    const known = (PERSISTENCE_MODES as readonly string[]).includes(mode);
    return {
      mode: known ? mode : 'unknown',
      detail: `appendonly yes, appendfsync ${appendfsync}`,
    };
  }
  const snapshots = save !== undefined && save.trim() !== '';
  return {
    mode: snapshots ? 'rdb' : 'none',
    detail: `appendonly no, save ${show(save ?? '')}`,
  };
}

/** What a crash loses in `mode`, for messages. */
const LOSES: Record<PersistenceMode, string> = {
  unknown: 'may lose acknowledged adds',
  none: 'loses every acknowledged add',
  rdb: 'loses every add acknowledged since the last snapshot',
  'aof-no': 'loses the adds the operating system had not yet written (about 30 s)',
  'aof-everysec': 'loses up to about the last second of acknowledged adds',
  'aof-always': 'loses nothing acknowledged',
};

/**
 * The weakest persistence among `servers` (one per master); with `durability: 'strict'`,
 * `RedisPersistenceError` unless it is `aof-always`.
 */
export async function checkPersistence(
  label: string,
  servers: readonly Send[],
  durability: Durability,
): Promise<Persistence> {
  const found = await Promise.all(servers.map(readPersistence));
  let weakest: Persistence = found[0] ?? { mode: 'unknown', detail: 'no server to ask' };
  for (const p of found) {
    if (PERSISTENCE_MODES.indexOf(p.mode) < PERSISTENCE_MODES.indexOf(weakest.mode)) weakest = p;
  }
  if (durability === 'strict' && weakest.mode !== 'aof-always') {
    const which = found.length > 1 ? `a master of ${found.length}` : 'the server';
    const what =
      weakest.mode === 'unknown'
        ? `could not verify the persistence of ${which} (${weakest.detail})`
        : `${which} has ${weakest.detail}`;
    throw new RedisPersistenceError(
      `${label}: ${what}: a crash ${LOSES[weakest.mode]}, silently. Configure appendonly yes and appendfsync always, or pass durability: 'best-effort' to accept it`,
    );
  }
  return weakest;
}

/**
 * Rejects with `RedisEvictionPolicyError` if any of `servers` has a `maxmemory-policy` that may
 * evict the filter's keys: `allkeys-*` always, `volatile-*` when it has a TTL.
 */
export async function checkEviction(
  label: string,
  servers: readonly Send[],
  hasTtl: boolean,
): Promise<void> {
  for (const send of servers) {
    const info = String(await send(['INFO', 'memory']));
    const policy = /maxmemory_policy:(\S+)/.exec(info)?.[1];
    if (policy === undefined) continue; // a server that does not say cannot be judged
    if (policy.startsWith('allkeys-') || (hasTtl && policy.startsWith('volatile-'))) {
      throw new RedisEvictionPolicyError(
        `${label}: the server's maxmemory-policy is ${policy}, which may evict the filter's keys${hasTtl ? ' (it has a TTL)' : ''} and lose acknowledged adds; use noeviction${hasTtl ? '' : ' or a volatile-* policy'}, or pass allowEviction: true`,
      );
    }
  }
}
