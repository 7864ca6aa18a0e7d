/**
 * node-redis clients as the tests use them: the offline queue off (a command on a dead link fails
 * at once instead of waiting), errors reaching the callers as rejected commands rather than as
 * unhandled 'error' events.
 *
 * The client types are the ones these functions infer, so a test's `let client: NodeClient`
 * holds exactly what `nodeClient()` returns: typing it `ReturnType<typeof createCluster>` instead
 * makes tsc compare two instantiations of node-redis' command maps, which costs 10-30 s of type
 * checking per file.
 */
import { createClient, createCluster } from 'redis';

/**
 * The client that standalone test clients are duplicates of, never connected. node-redis builds a
 * client class (the command table, with the modules of the `redis` package) for any options but
 * the last ones it built one for, about 0.1 s of CPU, so each new server's URL would cost one; a
 * duplicate reuses the template's class whatever its options.
 */
export const clientTemplate = createClient();

/** A standalone node-redis client for `url`, not connected yet. */
export function nodeClient(url: string) {
  const client = clientTemplate.duplicate({ url, disableOfflineQueue: true });
  client.on('error', () => undefined);
  return client;
}

/**
 * A node-redis cluster client for `rootNodes`, not connected yet. `reconnectMs`: a fixed delay
 * between a node connection's reconnect attempts (default: node-redis' backoff, up to 2 s).
 */
export function nodeCluster(rootNodes: readonly { url: string }[], reconnectMs?: number) {
  const client = createCluster({
    rootNodes: [...rootNodes],
    defaults: {
      disableOfflineQueue: true,
      ...(reconnectMs === undefined ? {} : { socket: { reconnectStrategy: () => reconnectMs } }),
    },
  });
  client.on('error', () => undefined);
  return client;
}

export type NodeClient = ReturnType<typeof nodeClient>;
export type NodeCluster = ReturnType<typeof nodeCluster>;
