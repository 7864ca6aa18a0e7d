/**
 * Running the Lua scripts of scripts.ts: `EVALSHA`, and on NOSCRIPT (a server restarted, its
 * scripts flushed, a cluster node that never ran the script) the script's body once with `EVAL`,
 * which also caches it on that server.
 *
 * A window of keys sends its calls in one turn, so after a flush all of them meet NOSCRIPT at
 * once. The first sends `EVAL`; the others wait until that `EVAL` is answered and try `EVALSHA`
 * again, in the order their NOSCRIPT arrived. On a cluster whose nodes all lost the script, the
 * calls that meet NOSCRIPT again (another node) do the same in the next round: one script body
 * per server instead of one per key. After {@link MAX_ROUNDS} rounds a call sends `EVAL` itself.
 * A call that met NOSCRIPT ran nothing, so sending it again is safe.
 *
 * TRYAGAIN (Redis Cluster: a script's keys are split between two nodes while their slot migrates)
 * also means nothing ran: the call is sent again after {@link TRYAGAIN_MS} ms, at most
 * {@link TRYAGAIN_TRIES} times (the migration of one slot's keys takes milliseconds), as ioredis
 * does on its own; node-redis passes the error on.
 */

import type { LuaScript } from './scripts.js';

/** Sends one command about `key` (the routing key on a cluster). */
type Send = (
  key: string,
  readonly: boolean,
  args: readonly (string | Buffer)[],
) => Promise<unknown>;

/** Rounds a call waits for another call's `EVAL` before it sends its own. */
const MAX_ROUNDS = 16;
/** Pause before a call that met TRYAGAIN is sent again, and how many times it is. */
const TRYAGAIN_MS = 25;
const TRYAGAIN_TRIES = 40;

function isTryAgain(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('TRYAGAIN');
}

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith('NOSCRIPT');
}

export class ScriptRunner {
  /** Per script (by SHA1): the `EVAL` in flight that caches it, until it is answered. */
  private readonly loading = new Map<string, Promise<unknown>>();

  constructor(private readonly send: Send) {}

  /** Runs `script` on `keys` (all in one slot, routed by the first) with `args`. */
  async run(
    script: LuaScript,
    keys: readonly string[],
    args: readonly (string | Buffer)[],
  ): Promise<unknown> {
    for (let tries = 1; ; tries++) {
      try {
        return await this.once(script, keys, args);
      } catch (err) {
        if (!isTryAgain(err) || tries >= TRYAGAIN_TRIES) throw err;
        await new Promise((resolve) => setTimeout(resolve, TRYAGAIN_MS));
      }
    }
  }

  /** One `EVALSHA` (and `EVAL` after NOSCRIPT). */
  private once(
    script: LuaScript,
    keys: readonly string[],
    args: readonly (string | Buffer)[],
  ): Promise<unknown> {
    const key = keys[0]!;
    const tail = [String(keys.length), ...keys, ...args];
    const body = () => this.send(key, false, ['EVAL', script.source, ...tail]);
    const attempt = (round: number): Promise<unknown> =>
      this.send(key, false, ['EVALSHA', script.sha, ...tail]).catch((err: unknown) => {
        if (!isNoScript(err)) throw err;
        const pending = this.loading.get(script.sha);
        if (pending !== undefined && round < MAX_ROUNDS) {
          const next = () => attempt(round + 1);
          return pending.then(next, next);
        }
        if (pending !== undefined) return body();
        const load = body();
        const done = () => {
          if (this.loading.get(script.sha) === load) this.loading.delete(script.sha);
        };
        this.loading.set(script.sha, load);
        load.then(done, done);
        return load;
      });
    return attempt(0);
  }
}
