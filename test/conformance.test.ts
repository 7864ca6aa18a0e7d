/**
 * Runs the conformance table (test/conformance/table.ts): every in-memory, chunked-file and
 * shard-store (`MemoryShardStore`) cell through the shared suite, and checks that the table covers every codec of the codec table in
 * every storage and backend (a cell is a target or a stated reason, shown as a skip).
 */
import { describe, expect, it } from 'vitest';
import { CODECS } from '../src/index.js';
import { runConformance } from './conformance/suite.js';
import {
  BACKENDS,
  CHUNKED_TARGETS,
  MEMORY_TARGETS,
  REDIS_TARGETS,
  reasonFor,
  STORAGES,
  STORE_TARGETS,
} from './conformance/table.js';

describe('the conformance table', () => {
  it('has a target or a reason for every codec x storage x backend', () => {
    const missing: string[] = [];
    for (const { name } of CODECS) {
      for (const storage of STORAGES) {
        for (const backend of BACKENDS) {
          const hasTarget =
            (backend === 'memory' && (MEMORY_TARGETS[name]?.[storage]?.length ?? 0) > 0) ||
            (backend === 'chunked-file' && storage === 'plain' && CHUNKED_TARGETS[name]) ||
            (backend === 'memory-store' && storage === 'plain' && STORE_TARGETS[name]) ||
            (backend.startsWith('redis') && storage === 'plain' && REDIS_TARGETS[name]);
          if (!hasTarget && reasonFor(name, storage, backend) === undefined) {
            missing.push(`${name} x ${storage} x ${backend}`);
          }
        }
      }
      // Every type runs somewhere in memory.
      expect(
        MEMORY_TARGETS[name]?.plain?.length ?? 0,
        `${name} has no plain memory target`,
      ).toBeGreaterThan(0);
    }
    expect(missing).toEqual([]);
  });

  // The cells without a target, visibly.
  for (const { name } of CODECS) {
    for (const storage of STORAGES) {
      for (const backend of BACKENDS) {
        const reason = reasonFor(name, storage, backend);
        if (reason !== undefined) it.skip(`${name} x ${storage} x ${backend}: ${reason}`, () => {});
      }
    }
  }
});

for (const byStorage of Object.values(MEMORY_TARGETS)) {
  for (const targets of Object.values(byStorage)) for (const t of targets ?? []) runConformance(t);
}
for (const t of Object.values(CHUNKED_TARGETS)) runConformance({ ...t, scale: 10_000 });
// The stored cells (the Redis filters' code over an in-process store) ask `has` key by key on 256
// keys of each check and on every false positive: a `has` is a window of one key through the
// batch's code (test/support/redis-adapters.ts, PER_KEY).
for (const t of Object.values(STORE_TARGETS)) runConformance({ ...t, scale: 5_000, perKey: 256 });
