/**
 * Every reader of outside bytes, fuzzed with a small seeded budget (`npm run fuzz` runs the same
 * table with a large one). For each input the reader returns a usable filter or throws
 * `FormatError`, within the time and allocation bounds stated in ./engine.ts
 * (TIME_LIMIT_MS = 5 s; ALLOCATION_BASE + ALLOCATION_PER_BYTE × input length = 32 MiB + 64 B/byte).
 */
import { describe, expect, it } from 'vitest';
import { fuzz } from './engine.js';
import { FUZZ_READERS } from './readers.js';

/** Inputs per reader in `npm test`: a few seconds for the whole table. */
const RUNS = 150;
const SEED = 0x5eed;

describe('fuzzing every reader of outside bytes', () => {
  for (const reader of FUZZ_READERS) {
    it(`${reader.name}: a filter or a FormatError, within bounds`, async () => {
      const stats = await fuzz(reader, RUNS, SEED);
      expect(stats.tried).toBeGreaterThanOrEqual(RUNS);
      // The mutations reach past the first check: some inputs are rejected (none accepted
      // blindly): a reader that accepted everything, or rejected everything, is suspect.
      expect(stats.rejected).toBeGreaterThan(0);
    });
  }
});
