/**
 * One error hierarchy: each Redis error is a subclass of its storage-level twin, so code written
 * against any `ShardStore` (the stored filters over `MemoryShardStore`, or a store of its own)
 * catches a Redis filter's failure by the same class; and every Redis error is still a
 * `RedisFilterError`. test/redis-integrity.test.ts checks it on a real lost shard.
 */

import { describe, expect, it } from 'vitest';
import {
  guardedReply,
  SHARD_REPLY,
  StoredFilterError,
  StoredFilterLostError,
  StoredFilterNotFoundError,
  StoredFilterReplicationError,
  StoredFilterStaleError,
  StoredFilterTimeoutError,
} from '../src/index.js';
import {
  RedisEvictionPolicyError,
  RedisFilterError,
  RedisFilterLostError,
  RedisFilterNotFoundError,
  RedisFilterReplicationError,
  RedisFilterStaleError,
  RedisFilterTimeoutError,
} from '../src/redis.js';

const TWINS = [
  [RedisFilterLostError, StoredFilterLostError],
  [RedisFilterStaleError, StoredFilterStaleError],
  [RedisFilterTimeoutError, StoredFilterTimeoutError],
  [RedisFilterNotFoundError, StoredFilterNotFoundError],
  [RedisFilterReplicationError, StoredFilterReplicationError],
] as const;

describe('Redis errors', () => {
  for (const [Redis, Stored] of TWINS) {
    it(`${Redis.name} is a ${Stored.name} and a RedisFilterError`, () => {
      const e = new Redis('boom');
      expect(e).toBeInstanceOf(Stored);
      expect(e).toBeInstanceOf(StoredFilterError);
      expect(e).toBeInstanceOf(RedisFilterError);
      expect(e.name).toBe(Redis.name);
      // The storage-level error of another store is not a Redis error.
      expect(new Stored('boom')).not.toBeInstanceOf(RedisFilterError);
      expect(new Stored('boom')).not.toBeInstanceOf(Redis);
    });
  }

  it('keeps the ordinary instanceof below RedisFilterError', () => {
    expect(new RedisEvictionPolicyError('x')).toBeInstanceOf(RedisFilterError);
    expect(new RedisFilterError('x')).not.toBeInstanceOf(RedisEvictionPolicyError);
    expect(new RedisFilterLostError('x')).not.toBeInstanceOf(RedisEvictionPolicyError);
    expect(new StoredFilterError('x')).not.toBeInstanceOf(RedisFilterError);
    expect(new Error('x')).not.toBeInstanceOf(RedisFilterError);
  });
});

describe('guarded write replies', () => {
  it('are 0, 1 or a REPLY code, read from a store raw reply; anything else fails loudly', () => {
    expect(guardedReply(1)).toBe(1);
    expect(guardedReply('0')).toBe(0);
    for (const code of Object.values(SHARD_REPLY)) expect(guardedReply(String(code))).toBe(code);
    expect(() => guardedReply(2)).toThrow(TypeError);
    expect(() => guardedReply('OK')).toThrow(/a guarded write replied OK/);
    expect(() => guardedReply(null)).toThrow(TypeError);
  });
});
