/**
 * npm's `prepare` hook: builds dist/ when it is missing.
 *
 * npm runs `prepare` when the package is installed from git (`npm install github:owner/bloomkit`),
 * in a fresh clone with its devDependencies: there dist/ never exists (it is not committed), so the
 * clone is built and the installed package has its code. npm also runs `prepare` after a plain
 * `npm install` or `npm ci` in a working copy; there an existing dist/ is left alone, so adding a
 * dependency does not rebuild (or fail on a half-edited tree). `npm pack` / `npm publish` always
 * rebuild, through `prepack`. Plain JavaScript, so it runs before anything is compiled.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

if (existsSync('dist/index.js') && existsSync('dist/index.cjs')) {
  console.log('prepare: dist/ exists; `npm run build` rebuilds it');
} else {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const result = spawnSync(npm, ['run', 'build'], {
    stdio: 'inherit',
    shell: process.platform === 'win32',
  });
  process.exit(result.status ?? 1);
}
