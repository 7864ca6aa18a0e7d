/**
 * Docs match code: every ```ts block of README.md and of the guide (docs/guide/*.md) runs here, with `bloomkit`, `bloomkit/node` and
 * `bloomkit/redis` mapped to the sources. The examples assert their own claims (node:assert), so
 * a README or guide that drifts from the code fails this test. Blocks tagged `ts redis` get a real Redis
 * server in `process.env.REDIS_URL` (and are visible skips where no redis-server is installed);
 * blocks tagged `ts no-run` are only shown, never run.
 * A block that starts worker threads and imports only `bloomkit/node` gets `bloomkit/node` bundled
 * from the sources (as an application gets dist/node.js): its threads then load plain JavaScript
 * instead of compiling the sources each (test/support/worker-bundle.ts).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { requireRedis, startRedis } from './support/redis-server.js';
import { bundleNode, removeBundles } from './support/worker-bundle.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
/** The documents whose examples run: README.md, then every guide file in name order. */
const documents = [
  'README.md',
  ...readdirSync(join(root, 'docs', 'guide'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/guide/${f}`),
];
const outDir = join(root, 'test', '.readme');

interface Block {
  line: number;
  tags: string[];
  code: string;
}

function blocks(markdown: string): Block[] {
  const out: Block[] = [];
  const re = /^```ts([^\n]*)\n([\s\S]*?)^```/gm;
  for (let m = re.exec(markdown); m !== null; m = re.exec(markdown)) {
    const line = markdown.slice(0, m.index).split('\n').length;
    out.push({ line, tags: (m[1] ?? '').trim().split(/\s+/).filter(Boolean), code: m[2] ?? '' });
  }
  return out;
}

/** Whether the block starts worker threads and takes everything from `bloomkit/node`. */
function workersOnNodeOnly(code: string): boolean {
  const from = [...code.matchAll(/from '(bloomkit[^']*)'/g)].map((m) => m[1]);
  return (
    /\b(buildParallel|FilterWorkerPool)\b/.test(code) && from.every((f) => f === 'bloomkit/node')
  );
}

function rewrite(code: string, nodeBundle?: string): string {
  if (nodeBundle !== undefined) {
    code = code.replace(/from 'bloomkit\/node'/g, `from '${pathToFileURL(nodeBundle).href}'`);
  }
  return code
    .replace(/from 'bloomkit'/g, "from '../../src/index.js'")
    .replace(/from 'bloomkit\/node'/g, "from '../../src/node.js'")
    .replace(/from 'bloomkit\/redis'/g, "from '../../src/redis.js'");
}

const all = documents.flatMap((doc) =>
  blocks(readFileSync(join(root, doc), 'utf8')).map((b) => ({ ...b, doc })),
);
const redisMissing = !requireRedis();

describe('README and guide examples', () => {
  mkdirSync(outDir, { recursive: true });
  afterAll(() => {
    rmSync(outDir, { recursive: true, force: true });
    removeBundles();
  });

  it('has examples to run, in the README and in the guide', () => {
    const run = all.filter((b) => !b.tags.includes('no-run'));
    expect(run.filter((b) => b.doc === 'README.md').length).toBeGreaterThan(0);
    expect(run.filter((b) => b.doc !== 'README.md').length).toBeGreaterThan(5);
  });

  for (const [i, block] of all.entries()) {
    if (block.tags.includes('no-run')) continue;
    const redis = block.tags.includes('redis');
    it.skipIf(redis && redisMissing)(
      `runs the example at ${block.doc} line ${block.line}`,
      async () => {
        let stop: (() => Promise<void>) | undefined;
        if (redis) {
          const server = await startRedis();
          process.env.REDIS_URL = server.url;
          stop = () => server.stop();
        }
        const file = join(outDir, `example-${i}.ts`);
        const nodeBundle = workersOnNodeOnly(block.code) ? await bundleNode() : undefined;
        writeFileSync(file, `${rewrite(block.code, nodeBundle)}\nexport {};\n`);
        const log = console.log;
        console.log = () => {};
        // The examples' temporary folders (os.tmpdir() reads TMPDIR) go under outDir, removed
        // after the file: an example shows how to use a folder, not how to clean it up.
        const tmp = process.env.TMPDIR;
        process.env.TMPDIR = join(outDir, `tmp-${i}`);
        mkdirSync(process.env.TMPDIR);
        try {
          await import(pathToFileURL(file).href);
        } finally {
          console.log = log;
          if (tmp === undefined) delete process.env.TMPDIR;
          else process.env.TMPDIR = tmp;
          await stop?.();
        }
      },
    );
  }
});
