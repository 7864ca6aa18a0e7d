/**
 * `bloomkit dedup` against `awk '!seen[$0]++'`, its `--state` across runs and Ctrl-C, and the
 * `Deduper` behind it: exact answers inside a batch, checkpoints, and a Deduper process killed
 * with SIGKILL mid-run (then restarted), which must still know every key it acknowledged before
 * its last completed checkpoint. The command runs in this process (the build's `main()`), except
 * on Ctrl-C, which takes a process (the built command: also dedup's end-to-end run).
 */

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packKeys } from '../src/filters/packed.js';
import { BlockedBloomFilter, BloomFilter, SplitBlockBloomFilter } from '../src/index.js';
import { Deduper } from '../src/node/deduper.js';
import { stateMismatch } from '../src/node/deduper-shape.js';
import { save } from '../src/node/io.js';
import { expectSameArray } from './support/bytes.js';
import { type BuiltCli, buildCli, type InProcessCli, inProcessCli } from './support/cli.js';
import { mulberry32 } from './support/random.js';

const TYPES = ['classic', 'blocked', 'split-block'] as const;
const STATE_CLASS = {
  classic: BloomFilter,
  blocked: BlockedBloomFilter,
  'split-block': SplitBlockBloomFilter,
};

let cli: InProcessCli;
let bin: BuiltCli;
let dir: string;
let text: string;

/** n lines drawn from `distinct` URLs with repeats, some CRLF, some empty, some non-ASCII. */
function lines(seed: number, n: number, distinct: number): string[] {
  const rnd = mulberry32(seed);
  return Array.from({ length: n }, () => {
    const i = Math.floor(rnd() * distinct);
    return i % 97 === 0 ? '' : `https://site-${i % 13}.example/p/${i}${i % 5 === 0 ? '/é' : ''}`;
  });
}

function awk(input: string, extra: string[] = []): string {
  const r = spawnSync('awk', [...extra, '!seen[$0]++'], { input, maxBuffer: 1 << 28 });
  return r.stdout.toString('utf8');
}

beforeAll(async () => {
  cli = inProcessCli();
  bin = await buildCli();
  dir = cli.tempDir();
  text = `${lines(1, 20_000, 8_000).join('\n')}\n`;
  writeFileSync(join(dir, 'urls.txt'), text);
});

afterAll(() => {
  cli?.dispose();
  bin?.dispose();
});

describe('bloomkit dedup', () => {
  it('prints what awk prints, in order, with a fixed and with a growing filter', async () => {
    const expected = awk(text);
    for (const args of [
      [],
      ['-n', '10000'],
      ['-n', '10000', '-p', '1e-9'],
      ['-n', '10000', '--type', 'classic'],
      ['-n', '10000', '--type', 'split-block'],
    ]) {
      const r = await cli.run(['dedup', ...args, join(dir, 'urls.txt')]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout.toString(), args.join(' ')).toBe(expected);
      expect(r.stderr).toMatch(/dedup: 20000 records, \d+ printed, \d+ dropped as repeats/);
    }
    const gz = await cli.run(['dedup', '--json'], { input: gzipSync(text) });
    expect(gz.stdout.toString()).toBe(expected);
    const summary = JSON.parse(gz.stderr);
    expect(summary.records).toBe(20_000);
    expect(summary.printed).toBe(expected.split('\n').length - 1);
  });

  it('with -d/-f dedups by the fields and prints whole records, as awk -F', async () => {
    const csv = `${lines(2, 3000, 500)
      .map((u, i) => `${i},${u},x`)
      .join('\n')}\n`;
    const r = await cli.run(['dedup', '-d', ',', '-f', '2'], { input: csv });
    expect(r.stdout.toString()).toBe(
      spawnSync('awk', ['-F', ',', '!seen[$2]++'], { input: csv }).stdout.toString(),
    );
  });

  it('--state resumes: a second run prints only keys the first did not see', async () => {
    const state = join(dir, 'frontier.bloom');
    const all = text.split('\n').slice(0, -1);
    const first = `${all.slice(0, 10_000).join('\n')}\n`;
    const r1 = await cli.run(
      ['dedup', '--state', state, '-n', '20000', '--checkpoint-every', '1000'],
      {
        input: first,
      },
    );
    expect(r1.code, r1.stderr).toBe(0);
    expect(r1.stdout.toString()).toBe(awk(first));
    const r2 = await cli.run(['dedup', '--state', state], { input: text });
    const seen = new Set(first.split('\n'));
    const expected = awk(text)
      .split('\n')
      .slice(0, -1)
      .filter((l) => !seen.has(l));
    expect(r2.stdout.toString()).toBe(expected.length ? `${expected.join('\n')}\n` : '');
    // The default state is a blocked filter; a classic state file (as earlier versions wrote,
    // and as --type classic writes) resumes and stays classic.
    expect((await cli.run(['info', state, '--json'])).stdout.toString()).toMatch(
      /"type":\s*"blocked"/,
    );
    const classic = BloomFilter.create({ capacity: 20_000, fpp: 1e-6 });
    for (const line of first.split('\n').slice(0, -1)) classic.add(line);
    const old = join(dir, 'classic.bloom');
    await save(classic, old);
    const r3 = await cli.run(['dedup', '--state', old], { input: text });
    expect(r3.stdout.toString()).toBe(r2.stdout.toString());
    // -n, -p or --type that would make another filter than the file's are refused, not ignored.
    const other = await cli.run(['dedup', '--state', old, '-n', '5', '--type', 'split-block'], {
      input: text,
    });
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('holds a classic filter of');
    expect((await cli.run(['info', old, '--json'])).stdout.toString()).toMatch(
      /"type":\s*"classic"/,
    );
    // --type needs -n, and names the types it takes.
    const noN = await cli.run(['dedup', '--type', 'classic'], { input: 'a\n' });
    expect(noN.code).toBe(2);
    expect(noN.stderr).toContain('--type needs -n CAPACITY');
    const badType = await cli.run(['dedup', '-n', '9', '--type', 'cuckoo'], { input: 'a\n' });
    expect(badType.stderr).toContain('--type must be one of blocked, classic, split-block');
    // A state file of another kind is refused, naming it.
    writeFileSync(join(dir, 'junk.bloom'), 'not a filter');
    const bad = await cli.run(['dedup', '--state', join(dir, 'junk.bloom')], { input: 'a\n' });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('junk.bloom');
  });

  it('ends with the rate and saturation its state file has, the figures add and info print', async () => {
    const keys = `${Array.from({ length: 3000 }, (_, i) => `u${i}`).join('\n')}\n`;
    for (const type of TYPES) {
      const state = join(dir, `figures-${type}.bloom`);
      const args = [
        'dedup',
        '-n',
        '1000',
        '-p',
        '0.01',
        '--type',
        type,
        '--state',
        state,
        '--json',
      ];
      const run = await cli.run(args, { input: keys });
      const summary = JSON.parse(run.stderr.trim().split('\n').at(-1)!);
      const add = await cli.run(['add', state, '--json'], { input: '' });
      const info = await cli.run(['info', state, '--json']);
      const after = JSON.parse(add.stdout.toString('utf8'));
      const facts = JSON.parse(info.stdout.toString('utf8'));
      expect(summary.saturation, type).toBe(after.saturation);
      expect(summary.saturated, type).toBe(after.saturated);
      expect(summary.fpp, type).toBe(Number(facts.expectedFpp.toPrecision(3)));
    }
  });

  it('on Ctrl-C saves the state whole, then exits 130', async () => {
    const state = join(dir, 'interrupted.bloom');
    const child = bin.start(['dedup', '--state', state]);
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stdin!.write('one\ntwo\none\n');
    await new Promise<void>((resolve) => {
      const poll = () => (out.includes('two\n') ? resolve() : setTimeout(poll, 20));
      poll();
    });
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(130);
    expect(out).toBe('one\ntwo\n');
    const again = await cli.run(['dedup', '--state', state], { input: 'two\nthree\n' });
    expect(again.stdout.toString()).toBe('three\n');
  });
});

describe('Deduper', () => {
  it.each(TYPES)(
    'seenBatch answers as seen() would, repeats inside a batch included (%s)',
    async (type) => {
      const d = await Deduper.open(null, { capacity: 10_000, fpp: 1e-9, type });
      expect(d.state.constructor).toBe(STATE_CLASS[type]);
      const keys = lines(3, 5000, 1500);
      const flags = d.seenBatch(packKeys('string', keys.slice(0, 2500)));
      const ref = new Set<string>();
      /** True if `k` was in the reference set; adds it. */
      const mark = (k: string): boolean => {
        const had = ref.has(k);
        ref.add(k);
        return had;
      };
      const expected = keys.slice(0, 2500).map((k) => (mark(k) ? 1 : 0));
      expectSameArray(flags, Uint8Array.from(expected));
      const rest = keys.slice(2500);
      expectSameArray(
        rest.map((k) => d.seen(k)),
        rest.map((k) => mark(k)),
      );
      expect(d.stats).toMatchObject({ keys: 5000, fresh: ref.size });
      await expect(d.checkpoint()).rejects.toThrow(TypeError);
    },
  );

  it.each(TYPES)(
    'false drops of %s stay within the binomial tolerance of its rate model',
    async (type) => {
      // 30,000 distinct keys into a state sized for 20,000 at 2%: every key answered "seen" is a
      // false drop; the Deduper's expectation (Σ model rate at each new key) must match the count.
      const d = await Deduper.open(null, { capacity: 20_000, fpp: 0.02, type });
      const keys = Array.from({ length: 30_000 }, (_, i) => `https://example.org/${type}/${i}`);
      let drops = 0;
      for (let i = 0; i < keys.length; i += 4096) {
        const flags = d.seenBatch(packKeys('string', keys.slice(i, i + 4096)));
        for (const f of flags) drops += f;
      }
      const expected = d.stats.expectedFalseDrops;
      expect(expected).toBeGreaterThan(100);
      expect(Math.abs(drops - expected)).toBeLessThanOrEqual(4 * Math.sqrt(expected) + 2);
    },
  );

  it('takes a state its -n/-p/--type would make, and names the shape of one it would not', async () => {
    for (const type of TYPES) {
      for (const [capacity, fpp] of [
        [5, 1e-6],
        [20_000, 1e-6],
        [123_457, 0.003],
      ] as const) {
        const d = await Deduper.open(null, { capacity, fpp, type });
        expect(stateMismatch(d.state, { capacity, fpp, type }), `${type} ${capacity}`).toBeNull();
        // The Deduper's state is the filter the type's own class sizes for (capacity, fpp).
        expect(d.state).toBeInstanceOf(STATE_CLASS[type]);
        const other = stateMismatch(d.state, { capacity: capacity * 3, fpp, type });
        expect(other).toMatch(new RegExp(`^a ${type} filter of [0-9,]+ (bits|blocks)`));
      }
    }
    const blocked = await Deduper.open(null, { capacity: 1000, type: 'blocked' });
    expect(stateMismatch(blocked.state, { capacity: 1000, fpp: 1e-6, type: 'classic' })).toBe(
      'a classic filter of 28,800 bits (m), 20 hashes (k)',
    );
  });

  it('refuses an unknown type, and a split-block state for number keys', async () => {
    await expect(Deduper.open(null, { capacity: 10, type: 'cuckoo' as never })).rejects.toThrow(
      /type must be one of classic, blocked, split-block, got "cuckoo"/,
    );
    await expect(
      Deduper.open(null, { capacity: 10, type: 'split-block', funnel: 'long' }),
    ).rejects.toThrow(/split-block state takes byte keys/);
  });

  it('checkpoints atomically and reopens; a filter of another funnel is refused', async () => {
    const path = join(dir, 'd.bloom');
    const d = await Deduper.open(path, { checkpointKeys: 100 });
    for (let i = 0; i < 250; i++) d.seen(`k${i}`);
    expect(d.checkpointDue).toBe(true);
    await d.checkpoint();
    expect(d.checkpointDue).toBe(false);
    const again = await Deduper.open(path);
    for (let i = 0; i < 250; i++) expect(again.seen(`k${i}`)).toBe(true);
    await expect(Deduper.open(path, { funnel: 'long' })).rejects.toThrow(/funnel 'string'/);
    // A temporary file left by a killed writer (a pid that is not running) is removed.
    const stale = join(dir, 'd.bloom.999999999.abcdef.tmp');
    writeFileSync(stale, 'partial');
    await Deduper.open(path);
    expect(existsSync(stale)).toBe(false);
  });

  it('after SIGKILL and a restart, knows every key acknowledged before the last checkpoint', async () => {
    const script = join(dir, 'frontier.mjs');
    writeFileSync(
      script,
      `import { Deduper } from ${JSON.stringify(bin.nodeEntry)};
const [path, from] = process.argv.slice(2);
const d = await Deduper.open(path, { capacity: 500_000, fpp: 1e-7 });
for (let i = Number(from); ; i++) {
  d.seen('https://example.com/' + i);
  if (i % 2000 === 1999) { await d.checkpoint(); process.stdout.write('ack ' + (i + 1) + '\\n'); }
}
`,
    );
    const path = join(dir, 'killed.bloom');
    const rnd = mulberry32(7);
    let from = 0;
    for (let round = 0; round < 3; round++) {
      const child = spawn(process.execPath, [script, path, String(from)], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let acked = from;
      let acks = 0;
      const want = 2 + Math.floor(rnd() * 3);
      await new Promise<void>((resolve) => {
        child.stdout.on('data', (d: Buffer) => {
          for (const m of d.toString().matchAll(/ack (\d+)/g)) {
            acked = Number(m[1]);
            acks++;
          }
          // Kill at a random moment after the wanted ack: often in the middle of the next save
          // (the 3 MB state takes about 50 ms to save, the 2,000 keys before it 10-25 ms).
          if (acks >= want) setTimeout(() => child.kill('SIGKILL'), Math.floor(rnd() * 40));
        });
        child.on('close', () => resolve());
      });
      // Restart: the state opens (never half-written) and holds every acknowledged key.
      const d = await Deduper.open(path, { capacity: 500_000, fpp: 1e-7 });
      let missing = 0;
      for (let i = 0; i < acked; i++) if (!d.seen(`https://example.com/${i}`)) missing++;
      expect(missing, `round ${round}: keys before ack ${acked} answered new`).toBe(0);
      expect(
        readdirSync(dir).filter((n) => n.startsWith('killed.bloom.') && n.endsWith('.tmp')),
      ).toEqual([]);
      from = acked;
    }
    expect(from).toBeGreaterThan(0);
    expect(readFileSync(path).subarray(0, 4).toString()).toBe('BLMK');
  });
});
