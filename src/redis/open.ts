/**
 * The Redis entry points of the stored sharded filters: `create`/`open` with a client instead of
 * a store (src/sharded/stored-open.ts does the work, over a {@link RedisShardStore}).
 */

import { show } from '../errors.js';
import type { StoreOps } from '../sharded/ops.js';
import type { RedisConnection } from './client.js';
import { type RedisFilterConnectionOptions, RedisStore } from './store.js';

/**
 * The operation runner of Redis filter `name` of class `label` (made when called, so that the
 * name and options are checked before the client).
 */
export function redisOps(
  label: string,
  client: RedisConnection,
  name: string,
  options: RedisFilterConnectionOptions,
): () => StoreOps {
  return () => new RedisStore(client, `${label} ${show(name)}`, options);
}
