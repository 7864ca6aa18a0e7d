import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', node: 'src/node.ts', redis: 'src/redis.ts' },
  format: ['esm', 'cjs'],
  // The node and redis entries need Node's types; the core is checked without them by tsc.
  dts: { compilerOptions: { types: ['node'] } },
  sourcemap: true,
  clean: true,
  target: 'es2022',
  // One copy of the core shared by all entries, so `instanceof` holds across
  // 'bloomkit', 'bloomkit/node' and 'bloomkit/redis'.
  splitting: true,
});
