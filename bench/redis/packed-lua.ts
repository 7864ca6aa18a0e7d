/**
 * The other command shape of bench/redis/run.ts: each recorded bloom `BITFIELD` (one per shard of
 * a window, ~128 keys) rewritten as ONE `EVALSHA` of a Lua script with four arguments, whatever
 * the number of keys: the shard key, k, and one binary argument with the cell offsets of all the
 * command's keys packed as u32 little-endian (4 bytes a bit, past the header as sent). The script
 * decodes them (`string.byte`), runs the same `BITFIELD` (header read first) with one
 * `redis.call`, and answers `{id, gen, flags}`: the header and ONE bulk string with a byte a key
 * (`1`: the key was new, for an add; `1`: every bit set, for a test) instead of k integers a key.
 *
 *   add:  EVALSHA <PACKED_ADD> 1 <shard> <k> <u32 LE offsets>   ->  {id, gen, "0110..."}
 *   has:  EVALSHA <PACKED_HAS> 1 <shard> <k> <u32 LE offsets>   ->  {id, gen, "1111..."}
 *
 * So the client encodes 6 arguments and decodes 3 reply elements per command, against ~3,600
 * arguments and ~900 integers of the BITFIELD it replaces: the cost per argument and per reply
 * element that limits node-redis is gone, and the question is what the server pays for it.
 * bloomkit does not send this shape (BENCHMARKS.md, "Redis", says why); it is here to measure it.
 */
import { createHash } from 'node:crypto';
import { writeSync } from 'node:fs';
import { resp } from './shared.js';

/** `a b c d` (string.byte of 4 bytes) as one u32 little-endian offset, in the scripts below. */
const DECODE = `local a, b, c, d = string.byte(s, pos, pos + 3)
  local o = a + b * 256 + c * 65536 + d * 16777216`;

/**
 * The `BITFIELD` arguments of `n` offsets built in table `args` (after the header reads), then
 * sent in one call; Lua's `unpack` takes at most ~8,000 values, so a command carries at most
 * {@link MAX_CELLS} cells (a bloomkit command carries at most 4,096 bits of 4 arguments).
 */
function script(write: boolean): string {
  const op = write
    ? `args[p] = 'SET'; args[p + 1] = 'u1'; args[p + 2] = o; args[p + 3] = 1; p = p + 4`
    : `args[p] = 'GET'; args[p + 1] = 'u1'; args[p + 2] = o; p = p + 3`;
  // add: a key is new if some bit was 0 before; has: a key is present if no bit is 0.
  const [start, found] = write ? ['0', '1'] : ['1', '0'];
  return `local key, k, s = KEYS[1], tonumber(ARGV[1]), ARGV[2]
local n = #s / 4
local args = {'GET', 'u32', 0, 'GET', 'u32', 32}
local p, pos = 7, 1
for i = 1, n do
  ${DECODE}
  ${op}
  pos = pos + 4
end
local r = redis.call('${write ? 'BITFIELD' : 'BITFIELD_RO'}', key, unpack(args))
local out, q = {}, 3
for i = 1, n / k do
  local f = ${start}
  for j = 1, k do
    if r[q] == 0 then f = ${found} end
    q = q + 1
  end
  out[i] = f
end
return {r[1], r[2], table.concat(out)}`;
}

/** The most cells one packed command may carry (see `script`). */
export const MAX_CELLS = 1900;

export const PACKED = {
  add: { source: script(true), sha: '' },
  has: { source: script(false), sha: '' },
};
for (const s of Object.values(PACKED)) s.sha = createHash('sha1').update(s.source).digest('hex');

/**
 * The packed form of a recorded bloom `BITFIELD` / `BITFIELD_RO` of the filter's hot path
 * (bitfield.ts: the header reads, then `SET u1 o 1` or `GET u1 o` per bit), for `k` bits a key.
 */
export function packCommand(args: readonly (string | Buffer)[], k: number): (string | Buffer)[] {
  const write = args[0] === 'BITFIELD';
  const per = write ? 4 : 3;
  const cells = (args.length - 8) / per;
  if (!Number.isInteger(cells) || cells % k !== 0 || cells > MAX_CELLS || args[9] !== 'u1') {
    throw new RangeError(`not a bloom BITFIELD of ${k} bits a key: ${String(args.slice(0, 12))}`);
  }
  const offsets = Buffer.allocUnsafe(cells * 4);
  for (let c = 0; c < cells; c++) offsets.writeUInt32LE(Number(args[8 + c * per + 2]), c * 4);
  const sha = write ? PACKED.add.sha : PACKED.has.sha;
  return ['EVALSHA', sha, '1', args[1] as string, String(k), offsets];
}

/**
 * A recorder (as shared.ts `recording` calls it) that also writes each hot-path command's packed
 * form to `fd` in RESP and keeps it in `kept` (all of them: ~28 MB for 1,000,000 keys).
 */
export function packedRecorder(
  fd: number,
  k: number,
): { record(args: readonly (string | Buffer)[]): void; kept: (string | Buffer)[][] } {
  const kept: (string | Buffer)[][] = [];
  return {
    kept,
    record(args) {
      const packed = packCommand(args, k);
      writeSync(fd, resp(packed));
      kept.push(packed);
    },
  };
}

/**
 * Whether a packed command's reply says what the BITFIELD's would: the filter's header (`id`
 * non-zero) and, for a test of added keys, every key present.
 */
export function packedReplyOk(reply: unknown, write: boolean): boolean {
  if (!Array.isArray(reply) || reply.length !== 3 || Number(reply[0]) === 0) return false;
  return write || !String(reply[2]).includes('0');
}
