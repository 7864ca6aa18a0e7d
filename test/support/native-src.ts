/**
 * Setup file of the test workers when the sources run from their compiled mirror
 * (test/support/src-mirror.ts): turns Node's source maps on before the first test file imports
 * bloomkit, so that a stack through bloomkit names the line of its .ts source
 * (`parseHeader src/formats/native.ts:174:11`), in vitest's report as in `error.stack`.
 */
process.setSourceMapsEnabled(true);
