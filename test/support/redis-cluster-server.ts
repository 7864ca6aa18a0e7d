/**
 * Small real Redis Clusters for tests: `masters` cluster-enabled redis-servers (no RDB; AOF, fsync always),
 * each with `replicas` replicas, joined with plain cluster commands on one connection per node:
 * CLUSTER SET-CONFIG-EPOCH and ADDSLOTSRANGE on each master (its share of the 16384 slots),
 * CLUSTER MEET from the first node to every other one (again every 2 s while some node has not
 * learned of every other: a loaded machine can make a handshake time out), CLUSTER REPLICATE on
 * each replica, then a short poll until every node reports cluster_state:ok with every slot and
 * node known, knows every replica's role, and every replica's link to its master is up.
 * (`redis-cli --cluster create` did the same through a separate process with second-long waits.)
 *
 * A master turns cluster_state:ok only 2 s after its start (Redis' CLUSTER_WRITABLE_DELAY), so a
 * cluster is ready about 2 s after the servers are spawned, whatever is done meanwhile.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type ClusterNodeHandle,
  type RedisServerHandle,
  RespError,
  rawCommand,
  rawCommands,
  redisMajorVersion,
  startClusterNode,
} from './redis-server.js';

const CLUSTER_READY_TIMEOUT_MS = 30_000;
const SLOTS = 16_384;

export interface StartRedisClusterOptions {
  /** Number of masters. Default 3 (the fewest a cluster can elect a new master with). */
  masters?: number;
  /** Replicas of each master, or of master i at [i] (e.g. [1, 0, 0]). Default 0. */
  replicas?: number | readonly number[];
  /**
   * cluster-node-timeout in ms. Default 5000. Fault tests that kill a master may want ~1000: the
   * others mark it FAIL after about this long (and a replica then takes over), and after a
   * restart they clear FAIL only once 2 x this has passed since it was set.
   */
  nodeTimeoutMs?: number;
  /** More redis-server arguments for every node. */
  extraArgs?: readonly string[];
}

export interface RedisClusterHandle {
  /** Every node: the masters (server i is master i), then master 0's replicas, master 1's... */
  readonly nodes: { host: string; port: number }[];
  /** For node-redis: `createCluster({ rootNodes })` (the masters). */
  readonly rootNodes: { url: string }[];
  /** The node servers, e.g. to kill() and restart() one in a fault test. */
  readonly servers: readonly RedisServerHandle[];
  /** Each server's node id (CLUSTER MYID). */
  readonly ids: readonly string[];
  /**
   * For each server, the index of the master it was started as a replica of (undefined for a
   * master). Roles as started: a failover changes them.
   */
  readonly replicaOf: readonly (number | undefined)[];
  /**
   * Resolves once every node reports cluster_state:ok with all slots and nodes known (default
   * timeout 30 s). Use after restart() of a node: a restarted master answers PING at once but
   * refuses commands with CLUSTERDOWN until it and the others agree it is back (>= 2 s, and
   * 2 x nodeTimeoutMs after the others had marked it FAIL). `servers` limits the nodes asked
   * (e.g. to leave out a node that was killed).
   */
  waitUntilOk(timeoutMs?: number, servers?: readonly RedisServerHandle[]): Promise<void>;
  /** Stops every node and removes their temp dirs. Idempotent. */
  stop(): Promise<void>;
}

function infoField(info: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

/** Polls `check` (undefined: done; a string: what is still missing) until done or `deadline`. */
async function pollUntil(
  what: string,
  deadline: number,
  check: () => Promise<string | undefined>,
): Promise<void> {
  for (;;) {
    let pending: string | undefined;
    try {
      pending = await check();
    } catch (err) {
      pending = (err as Error).message;
    }
    if (pending === undefined) return;
    if (Date.now() >= deadline) throw new Error(`${what} not reached in time: ${pending}`);
    await sleep(20);
  }
}

/** cluster_state:ok, every slot assigned and `known` nodes known, on every server given. */
function clusterOk(
  servers: readonly RedisServerHandle[],
  known: number,
): () => Promise<string | undefined> {
  return async () => {
    const states = await Promise.all(
      servers.map(async (s) => {
        const info = await rawCommand(s.port, ['CLUSTER', 'INFO'], { timeoutMs: 1_000 }).catch(
          (err: Error) => err.message,
        );
        if (typeof info !== 'string' || !info.includes('cluster_state:')) {
          return `${s.port}: ${String(info)}`;
        }
        const state = infoField(info, 'cluster_state');
        const slots = infoField(info, 'cluster_slots_assigned');
        const nodes = infoField(info, 'cluster_known_nodes');
        return state === 'ok' && slots === String(SLOTS) && nodes === String(known)
          ? undefined
          : `${s.port}: state=${state} slots=${slots} known=${nodes}`;
      }),
    );
    const pending = states.filter((s): s is string => s !== undefined);
    return pending.length === 0 ? undefined : pending.join('; ');
  };
}

/** Every node lists each replica as a replica of its master, and each replica's link is up. */
function rolesSettled(
  servers: readonly ClusterNodeHandle[],
  ids: readonly string[],
  replicaOf: readonly (number | undefined)[],
): () => Promise<string | undefined> {
  return async () => {
    for (const s of servers) {
      const nodes = await rawCommand(s.port, ['CLUSTER', 'NODES']);
      if (typeof nodes !== 'string') return `${s.port}: CLUSTER NODES gave ${String(nodes)}`;
      for (const [i, m] of replicaOf.entries()) {
        if (m === undefined) continue;
        const line = nodes.split('\n').find((l) => l.startsWith(`${ids[i]} `));
        const fields = line?.split(' ') ?? [];
        if (!fields[2]?.split(',').includes('slave') || fields[3] !== ids[m]) {
          const [replica, master] = [servers[i]!.port, servers[m]!.port];
          return `${s.port} does not list ${replica} as a replica of ${master} yet`;
        }
      }
    }
    for (const [i, m] of replicaOf.entries()) {
      if (m === undefined) continue;
      const info = await rawCommand(servers[i]!.port, ['INFO', 'replication']);
      if (typeof info !== 'string' || infoField(info, 'master_link_status') !== 'up') {
        return `replica ${servers[i]!.port}: master link not up yet`;
      }
    }
    return undefined;
  };
}

function check(reply: unknown, what: string): void {
  if (reply instanceof RespError) throw new Error(`${what}: ${reply.message}`);
}

/**
 * Starts a cluster of `masters` masters with `replicas` replicas each (see the module comment)
 * and resolves once it is ready.
 */
export async function startRedisCluster(
  opts: StartRedisClusterOptions = {},
): Promise<RedisClusterHandle> {
  const masters = opts.masters ?? 3;
  if (!Number.isInteger(masters) || masters < 1) {
    throw new RangeError(`masters must be a positive integer, got ${masters}`);
  }
  const perMaster = Array.from({ length: masters }, (_, i) =>
    typeof opts.replicas === 'object' ? (opts.replicas[i] ?? 0) : (opts.replicas ?? 0),
  );
  if (!perMaster.every((r) => Number.isInteger(r) && r >= 0)) {
    throw new RangeError(`replicas must be non-negative integers, got ${String(opts.replicas)}`);
  }
  const nodeTimeoutMs = opts.nodeTimeoutMs ?? 5_000;
  const replicaOf: (number | undefined)[] = [
    ...Array.from({ length: masters }, () => undefined),
    ...perMaster.flatMap((r, m) => Array.from({ length: r }, () => m)),
  ];
  const total = replicaOf.length;
  const started = await Promise.allSettled(
    Array.from({ length: total }, () => startClusterNode(nodeTimeoutMs, opts.extraArgs ?? [])),
  );
  const servers = started.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const stopAll = async (): Promise<void> => {
    await Promise.all(servers.map((s) => s.stop()));
  };
  const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) {
    await stopAll();
    throw failed.reason;
  }
  let ids: string[];
  try {
    const deadline = Date.now() + CLUSTER_READY_TIMEOUT_MS;
    // ADDSLOTSRANGE and MEET with a bus port are Redis 7 (before it the bus is port + 10000).
    const redis7 = redisMajorVersion() >= 7;
    ids = await Promise.all(
      servers.map(async (s, i) => {
        const commands: string[][] = [
          ['CLUSTER', 'MYID'],
          ['CLUSTER', 'SET-CONFIG-EPOCH', String(i + 1)],
        ];
        if (i < masters) {
          const from = Math.floor((i * SLOTS) / masters);
          const to = Math.floor(((i + 1) * SLOTS) / masters) - 1;
          commands.push(
            redis7
              ? ['CLUSTER', 'ADDSLOTSRANGE', String(from), String(to)]
              : [
                  'CLUSTER',
                  'ADDSLOTS',
                  ...Array.from({ length: to - from + 1 }, (_, j) => String(from + j)),
                ],
          );
        }
        const replies = await rawCommands(s.port, commands);
        for (const [j, r] of replies.entries()) check(r, `${commands[j]!.join(' ')} on ${s.port}`);
        return String(replies[0]);
      }),
    );
    const meets = servers
      .slice(1)
      .map((s) =>
        redis7
          ? ['CLUSTER', 'MEET', s.host, String(s.port), String(s.busPort)]
          : ['CLUSTER', 'MEET', s.host, String(s.port)],
      );
    let met = Date.now();
    const meet = async (): Promise<void> => {
      met = Date.now();
      if (meets.length === 0) return;
      for (const r of await rawCommands(servers[0]!.port, meets)) check(r, 'CLUSTER MEET');
    };
    await meet();
    /**
     * `check`, sending the MEETs again every 2 s while it finds a node that does not know every
     * other: a node drops a handshake that does not finish within the node timeout (at least
     * 1 s), which a loaded machine can make happen, and would then never learn of that node. A
     * MEET of a node already known only starts a handshake that ends by finding it known.
     */
    const meeting =
      (check: () => Promise<string | undefined>) => async (): Promise<string | undefined> => {
        const pending = await check();
        const unmet =
          pending !== undefined &&
          (/unknown node/i.test(pending) ||
            [...pending.matchAll(/known=(\d+)/g)].some((m) => Number(m[1]) < total));
        if (unmet && Date.now() - met >= 2_000) await meet();
        return pending;
      };
    // A replica can follow its master once it has heard of it (the MEET handshakes spread that).
    await Promise.all(
      replicaOf.map(async (m, i) => {
        if (m === undefined) return;
        await pollUntil(
          `replica ${servers[i]!.port} of ${servers[m]!.port}`,
          deadline,
          meeting(async () => {
            const r = await rawCommand(servers[i]!.port, ['CLUSTER', 'REPLICATE', ids[m]!]);
            return r === 'OK' ? undefined : String(r);
          }),
        );
      }),
    );
    await pollUntil('cluster_state:ok', deadline, meeting(clusterOk(servers, total)));
    await pollUntil('replica roles', deadline, rolesSettled(servers, ids, replicaOf));
  } catch (err) {
    await stopAll();
    throw err;
  }
  return {
    nodes: servers.map((s) => ({ host: s.host, port: s.port })),
    rootNodes: servers.slice(0, masters).map((s) => ({ url: s.url })),
    servers,
    ids,
    replicaOf,
    waitUntilOk: (timeoutMs = CLUSTER_READY_TIMEOUT_MS, among = servers) =>
      pollUntil('cluster_state:ok', Date.now() + timeoutMs, clusterOk(among, total)),
    stop: stopAll,
  };
}
