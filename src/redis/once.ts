/**
 * Removes that are applied at most once even when the client library sends them twice.
 *
 * ioredis resends, after it reconnects, every command whose reply it had not read when the
 * connection closed (`autoResendUnfulfilledCommands`, on by default). For an add that is harmless
 * (setting a bit twice sets it once), but a counting or cuckoo remove applied twice takes a key's
 * count down twice: a key added twice and removed once would then answer false, a false negative.
 * node-redis rejects such commands instead of resending them (the caller is told the outcome is
 * unknown), so only a client that resends needs this.
 *
 * For such a client each remove carries an operation id and a deadline, and runs as its script
 * wrapped by {@link once}: in one atomic step the wrapper looks for the id's marker key (same hash
 * tag as the shard, so the same slot) and, if the remove already ran, returns the reply it gave
 * then, changing nothing; else, if the server's clock is past the deadline, it refuses
 * ({@link ONCE_LATE}: nothing changes); else it runs the remove and, when it was applied (reply 0
 * or 1), keeps its reply in the marker until 1 s after the deadline. Both tests use the server's
 * own clock, so whatever the client's clock says, a resend is either answered from the marker or
 * refused: never applied a second time. The client's clock only sets the deadline: if it is more
 * than {@link ONCE_WINDOW} ms behind the server's, every remove is refused (an error, not a loss).
 *
 * Cost: one more key per remove, alive about {@link ONCE_WINDOW} ms (about 100 bytes of server
 * memory each, with Redis' per-key overhead), and a GET, TIME and SET in the script.
 *
 * Adds are not wrapped. A counting add applied twice raises a counter one too high and a cuckoo
 * add applied twice stores a second fingerprint: after the remove, the key still answers true (a
 * stale positive, as a false positive is), and no other key can answer false because of it.
 */

import { onceKey } from './keys.js';
import { type LuaScript, lua } from './scripts.js';

/** How long, in ms after it was first sent, a remove may still be resent and answered. */
export const ONCE_WINDOW = 30_000;

/** The reply of a remove resent after its deadline: refused, nothing changed. */
export const ONCE_LATE = -5;

/**
 * `script` made idempotent: KEYS gains the marker key last, ARGV the deadline (ms since the epoch,
 * server clock) last; the script itself sees its own KEYS and ARGV.
 */
export function once(script: LuaScript): LuaScript {
  return lua(
    `${script.name}Once`,
    `local marker, deadline = KEYS[#KEYS], tonumber(ARGV[#ARGV])
local prior = redis.call('GET', marker)
if prior then return tonumber(prior) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if now > deadline then return ${ONCE_LATE} end
local KEYS, ARGV = {unpack(KEYS, 1, #KEYS - 1)}, {unpack(ARGV, 1, #ARGV - 1)}
local function body()
${script.source}
end
local r = body()
if r == 0 or r == 1 then redis.call('SET', marker, r, 'PX', deadline - now + 1000) end
return r`,
  );
}

/** Operation ids: a random prefix per store object, then a counter (unique across clients). */
export class OnceIds {
  private readonly prefix: string;
  private next = 0;

  constructor() {
    const words = new Uint32Array(2);
    globalThis.crypto.getRandomValues(words);
    this.prefix = `${words[0]!.toString(36)}${words[1]!.toString(36)}`;
  }

  /** A new operation id. */
  id(): string {
    return `${this.prefix}.${(this.next++).toString(36)}`;
  }
}

/** The wrapped scripts, made once each. */
const WRAPPED = new Map<LuaScript, LuaScript>();

/** Runs a script on keys of one slot (the store's EVALSHA/EVAL runner). */
type Run = (
  script: LuaScript,
  keys: readonly string[],
  args: readonly (string | Buffer)[],
) => Promise<unknown>;

/** A store's removes: plain when its client never resends, else wrapped by {@link once}. */
export class OnceRemoves {
  private readonly ids = new OnceIds();

  constructor(
    private readonly run: Run,
    /** Whether the client library may send a command twice (`CommandClient.resends`). */
    readonly resends: boolean,
  ) {}

  /** Runs the remove `script` on shard `ref` with `args`; its numeric reply. */
  async send(script: LuaScript, ref: string, args: readonly string[]): Promise<number> {
    if (!this.resends) return Number(await this.run(script, [ref], args));
    const wrapped = WRAPPED.get(script) ?? once(script);
    WRAPPED.set(script, wrapped);
    const keys = [ref, onceKey(ref, this.ids.id())];
    const reply = Number(
      await this.run(wrapped, keys, [...args, String(Date.now() + ONCE_WINDOW)]),
    );
    if (reply === ONCE_LATE) {
      throw new Error(
        `the client library sent a remove again after it reconnected, more than ${ONCE_WINDOW / 1000} s after it was first sent (or this machine's clock is that far behind the server's): it was not applied again; whether the first one was is unknown`,
      );
    }
    return reply;
  }
}
