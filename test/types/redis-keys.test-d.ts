/**
 * Type test (see keys.test-d.ts): the Redis-backed filters take the key type of their funnel too,
 * through the promise `create` returns.
 */
import { RedisBloomFilter, RedisCountingBloomFilter } from '../../src/redis.js';

declare const client: object;

export async function typed(): Promise<void> {
  const ids = await RedisBloomFilter.create(client, 'ids', {
    capacity: 1000,
    fpp: 0.01,
    funnel: 'long',
  });
  await ids.add(42n);
  await ids.hasMany([1, 2n]);
  // @ts-expect-error a 'long' filter takes bigint | number keys, not strings
  await ids.add('42');

  const sessions = await RedisCountingBloomFilter.create(client, 'sessions', {
    capacity: 1000,
    fpp: 0.01,
  });
  await sessions.add('alice');
  // @ts-expect-error the default funnel is 'string'
  await sessions.remove(7);
}
