/**
 * The one seam between the Redis filters and a Redis client library: {@link CommandClient} sends
 * a command about a key (routed by that key on a cluster) and lists the masters. Two client
 * libraries are supported, each in a few lines below: node-redis v5 (`createClient`,
 * `createClientPool`, `createCluster`) and ioredis (`new Redis()`, `new Redis.Cluster()`). A
 * third is one more `wrap` function.
 *
 * Replies are passed through as the library gives them (integers as numbers, bulk strings as
 * strings, or `Buffer`s from `sendBinary`); the filters read them with `Number()` and `String()`.
 */

import { show } from '../errors.js';

/** What a filter sends through: one command at a time, pipelined by the library. */
export interface CommandClient {
  /** Which library and topology, for messages. */
  readonly kind: 'node-redis' | 'node-redis cluster' | 'ioredis' | 'ioredis cluster';
  readonly isCluster: boolean;
  /**
   * Whether the library sends a command again after a reconnect when its reply was lost (ioredis'
   * `autoResendUnfulfilledCommands`, on by default): such a command may run twice (once.ts).
   */
  readonly resends: boolean;
  /** Sends `args` (routed by `key` on a cluster). */
  send(key: string, readonly: boolean, args: readonly (string | Buffer)[]): Promise<unknown>;
  /** Like `send`, with bulk-string replies as `Buffer`s. */
  sendBinary(key: string, args: readonly (string | Buffer)[]): Promise<unknown>;
  /** Null when the client can take commands now, else why not (e.g. `status "reconnecting"`). */
  notReady(): string | null;
  /** A command sender for each master (one for a standalone server). */
  masters(): Promise<((args: readonly string[]) => Promise<unknown>)[]>;
}

/**
 * A connected client of node-redis v5 (`createClient`, `createClientPool`, `createCluster`) or of
 * ioredis (`new Redis(...)`, `new Redis.Cluster(...)`).
 */
export type RedisConnection = object;

type Send = (args: readonly (string | Buffer)[], options?: object) => Promise<unknown>;

/** node-redis command options: bulk strings (RESP type `$`, 36) decoded as `Buffer`. */
const BINARY = { typeMapping: { 36: Buffer } } as const;

interface NodeRedisClient {
  sendCommand: Send;
  isReady?: boolean;
  isOpen?: boolean;
}

interface NodeRedisCluster {
  sendCommand(
    firstKey: string | Buffer | undefined,
    isReadonly: boolean | undefined,
    args: readonly (string | Buffer)[],
    options?: object,
  ): Promise<unknown>;
  readonly masters: readonly unknown[];
  nodeClient(node: unknown): NodeRedisClient | Promise<NodeRedisClient>;
  isOpen?: boolean;
}

interface IoRedis {
  call(command: string, ...args: (string | Buffer)[]): Promise<unknown>;
  callBuffer(command: string, ...args: (string | Buffer)[]): Promise<unknown>;
  /** ioredis's per-command binary forms (`getrangeBuffer`, `mgetBuffer`, ...). */
  [method: `${string}Buffer`]: unknown;
  readonly status: string;
  readonly isCluster?: boolean;
  readonly options?: {
    autoResendUnfulfilledCommands?: boolean;
    redisOptions?: { autoResendUnfulfilledCommands?: boolean };
  };
  nodes?(role: 'master'): IoRedis[];
}

function isIoRedis(c: object): c is IoRedis {
  return (
    typeof (c as IoRedis).call === 'function' &&
    typeof (c as IoRedis).callBuffer === 'function' &&
    typeof (c as IoRedis).status === 'string'
  );
}

function isNodeRedisCluster(c: object): c is NodeRedisCluster {
  return (
    'masters' in c && 'nodeClient' in c && typeof (c as NodeRedisCluster).sendCommand === 'function'
  );
}

/** Wraps `client` (see {@link RedisConnection}); `TypeError` for anything else. */
export function commandClient(client: unknown): CommandClient {
  if (client !== null && typeof client === 'object') {
    if (isIoRedis(client)) return ioredis(client);
    if (isNodeRedisCluster(client)) return nodeRedisCluster(client);
    if (typeof (client as NodeRedisClient).sendCommand === 'function') {
      return nodeRedis(client as NodeRedisClient);
    }
  }
  throw new TypeError(
    `client must be a connected node-redis client or cluster, or an ioredis client or cluster, got ${show(client)}`,
  );
}

function nodeRedis(c: NodeRedisClient): CommandClient {
  return {
    kind: 'node-redis',
    isCluster: false,
    resends: false,
    send: (_key, _readonly, args) => c.sendCommand(args),
    sendBinary: (_key, args) => c.sendCommand(args, BINARY),
    notReady: () => {
      if (c.isReady === false) return 'the node-redis client is not connected (isReady is false)';
      if (c.isReady === undefined && c.isOpen === false) {
        return 'the node-redis client is not open';
      }
      return null;
    },
    masters: async () => [(args) => c.sendCommand(args)],
  };
}

function nodeRedisCluster(c: NodeRedisCluster): CommandClient {
  return {
    kind: 'node-redis cluster',
    isCluster: true,
    resends: false,
    send: (key, readonly, args) => c.sendCommand(key, readonly, args),
    sendBinary: (key, args) => c.sendCommand(key, true, args, BINARY),
    notReady: () => (c.isOpen === false ? 'the node-redis cluster client is not open' : null),
    masters: async () => {
      const out: ((args: readonly string[]) => Promise<unknown>)[] = [];
      for (const node of c.masters) {
        const client = await c.nodeClient(node);
        out.push((args) => client.sendCommand(args));
      }
      return out;
    },
  };
}

function ioredis(c: IoRedis): CommandClient {
  const cluster = c.isCluster === true;
  return {
    kind: cluster ? 'ioredis cluster' : 'ioredis',
    isCluster: cluster,
    resends:
      (cluster ? c.options?.redisOptions : c.options)?.autoResendUnfulfilledCommands !== false,
    send: (_key, _readonly, args) => c.call(args[0] as string, ...args.slice(1)),
    sendBinary: (_key, args) => {
      // The command's own binary method, not `callBuffer`: with `enableAutoPipelining`,
      // ioredis drops callBuffer's command name (redis/ioredis#1923: "ERR unknown command").
      const method = c[`${(args[0] as string).toLowerCase()}Buffer`];
      return typeof method === 'function'
        ? (method as (...a: (string | Buffer)[]) => Promise<unknown>).apply(c, args.slice(1))
        : c.callBuffer(args[0] as string, ...args.slice(1));
    },
    notReady: () =>
      c.status === 'ready' ? null : `the ioredis client is not ready (status ${show(c.status)})`,
    masters: async () => {
      const nodes = cluster && c.nodes !== undefined ? c.nodes('master') : [c];
      return nodes.map((n) => (args: readonly string[]) => n.call(args[0]!, ...args.slice(1)));
    },
  };
}
