/**
 * npm's `prepack` and `postpack` hooks: the published package.json carries no scripts.
 *
 * A lifecycle script in an installed package (`prepare`, `install`, ...) makes npm warn on every
 * install ("1 package has install scripts not yet covered by allowScripts") and, where scripts
 * are allowed, run it; the other scripts (test, bench, docs) name files the package does not
 * ship. So:
 *
 * - `node scripts/pack.mjs prepack` builds dist/ (`npm run build`; skipped only when
 *   `BLOOMKIT_PACK_REUSE_BUILD=1` says the caller has just built it, as test/package.test.ts
 *   does), then moves package.json to `package.json.prepack` and writes package.json without its
 *   `scripts` field, so the tarball npm makes next holds that one;
 * - `node scripts/pack.mjs postpack` moves the saved package.json back (with its modification
 *   time, so a build is not thought stale because of the pack).
 *
 * A pack stopped between the two leaves the saved file; the next `prepack` (or `postpack`) puts it
 * back first, so the working copy's package.json is never lost. Installing from git still builds:
 * npm runs the repository's `prepare` (scripts/prepare.mjs) in the clone before it packs it.
 * Plain JavaScript, so it runs before anything is compiled.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkgPath = join(root, 'package.json');
const savedPath = join(root, 'package.json.prepack');

/** Puts the saved package.json back, if a prepack saved one; keeps its modification time. */
function restore() {
  if (!existsSync(savedPath)) return;
  const { atime, mtime } = statSync(savedPath);
  renameSync(savedPath, pkgPath);
  utimesSync(pkgPath, atime, mtime);
}

const step = process.argv[2];
if (step === 'postpack') {
  restore();
} else if (step === 'prepack') {
  restore();
  if (process.env.BLOOMKIT_PACK_REUSE_BUILD !== '1') {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const result = spawnSync(npm, ['run', 'build'], {
      cwd: root,
      stdio: 'inherit',
      shell: process.platform === 'win32',
    });
    if (result.status !== 0) process.exit(result.status ?? 1);
  }
  const text = readFileSync(pkgPath, 'utf8');
  const { scripts: _scripts, ...published } = JSON.parse(text);
  renameSync(pkgPath, savedPath);
  writeFileSync(pkgPath, `${JSON.stringify(published, null, 2)}\n`);
} else {
  console.error(`pack.mjs: expected "prepack" or "postpack", got ${JSON.stringify(step)}`);
  process.exit(2);
}
