/**
 * How `bloomkit redis` reaches its server, with every wait bounded: the command ends with exit
 * status 2 and a message naming the URL when nothing listens there, when the server does not
 * answer (stopped, or a firewall that drops packets), and when the connection breaks mid-run.
 *
 * - Connect: node-redis with `connectTimeout` and no reconnection (a command has nothing to retry
 *   for: its caller can run it again), and the whole handshake under one deadline of `timeout`
 *   ms, so a server that accepts the TCP connection but never answers (SIGSTOP) is a failure too.
 * - Commands: the filters' own time bound (`timeout` option of RedisBloomFilter: the same ms).
 * - Close: the socket is destroyed, without a `QUIT` that waits for an answer, so a server that
 *   froze after the last command cannot hold the command (or hide the error that ended it).
 */

import { CliError, type OptionValues } from './command.js';
import { stringOption } from './options.js';

/** The default bound on connecting and on each operation, seconds. */
export const DEFAULT_REDIS_TIMEOUT_S = 10;

/** The node-redis client methods the command uses. */
export interface RedisCliClient {
  connect(): Promise<unknown>;
  destroy(): void;
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/** The server and the bound (ms) from `--url` (or REDIS_URL) and `--timeout SECONDS`. */
export function redisTarget(options: OptionValues): { url: string; timeoutMs: number } {
  const url = stringOption(options, 'url') ?? process.env.REDIS_URL;
  if (url === undefined) throw new CliError('give --url redis://HOST:PORT (or set REDIS_URL)');
  const text = stringOption(options, 'timeout');
  const seconds = text === undefined ? DEFAULT_REDIS_TIMEOUT_S : Number(text);
  if (!(Number.isFinite(seconds) && seconds > 0 && seconds <= 86_400)) {
    throw new CliError(
      `--timeout must be a number of seconds in (0, 86400], got ${JSON.stringify(text)}`,
    );
  }
  return { url, timeoutMs: Math.ceil(seconds * 1000) };
}

/**
 * `url` as messages show it: its password (`redis://user:PASSWORD@host`) replaced by `***`, so
 * that an error line copied into a log or a ticket does not carry the server's password.
 */
export function shownUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^/@:]*:)[^/]*@/i, '$1***@');
}

/** Resolves as `promise` does, or rejects with `onTimeout()` after `ms`; the timer never lingers. */
export async function withDeadline<T>(
  promise: Promise<T>,
  ms: number,
  onTimeout: () => Error,
): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(onTimeout()), ms);
  });
  try {
    return await Promise.race([promise, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * A connected client for `url` (the `redis` package, an optional dependency of bloomkit), within
 * `timeoutMs`; a `CliError` naming the URL otherwise.
 */
export async function connectRedis(url: string, timeoutMs: number): Promise<RedisCliClient> {
  let createClient: (o: object) => RedisCliClient;
  try {
    const mod = (await import('redis')) as unknown as {
      createClient?: typeof createClient;
      default?: { createClient?: typeof createClient };
    };
    const found = mod.createClient ?? mod.default?.createClient;
    if (found === undefined) throw new Error('no createClient');
    createClient = found;
  } catch {
    throw new CliError('the redis package is not installed: npm install redis');
  }
  const client = createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: timeoutMs, reconnectStrategy: false },
  });
  let lastError: Error | null = null;
  client.on('error', (error) => {
    lastError = error;
  });
  const seconds = timeoutMs / 1000;
  const shown = shownUrl(url);
  try {
    await withDeadline(
      client.connect(),
      timeoutMs,
      () => new CliError(`${shown}: no answer within ${seconds} s (is the server running?)`),
    );
  } catch (error) {
    destroy(client);
    if (error instanceof CliError) throw error;
    const cause = (error as Error).message || (lastError as Error | null)?.message || 'failed';
    throw new CliError(`${shown}: cannot connect (${cause})`);
  }
  return client;
}

/**
 * Closes the connection at once (every command the command sent was answered or failed by
 * then). Not `QUIT`: it waits for the server's reply, so a server that froze after the last
 * command would hold the process; and once a `QUIT` is under way node-redis refuses `destroy()`.
 */
export function closeRedis(client: RedisCliClient): void {
  destroy(client);
}

/** Drops the connection now (node-redis throws when it is already closed). */
function destroy(client: RedisCliClient): void {
  try {
    client.destroy();
  } catch {
    // Already closed.
  }
}
