/**
 * Loopback port helpers for tests that start real servers.
 *
 * `getFreePort()` asks the kernel for a free port (bind to port 0, read it, close). The port is
 * only free at that instant: another process may take it before our server binds, so callers must
 * be ready to retry when their server reports EADDRINUSE. On Linux, bind(0) hands out odd ports
 * while outgoing connections prefer even ones, so a picked port rarely collides with a client's
 * own ephemeral port.
 */
import { createServer } from 'node:net';

export const LOOPBACK = '127.0.0.1';

/** A port that was free on 127.0.0.1 when this resolved. */
export function getFreePort(host: string = LOOPBACK): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host, exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error(`unexpected server address: ${String(address)}`));
        return;
      }
      const { port } = address;
      server.close((err) => (err ? reject(err) : resolve(port)));
    });
  });
}

/** Whether `port` can be bound on `host` right now. */
export function isPortFree(port: number, host: string = LOOPBACK): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host, exclusive: true }, () => {
      server.close(() => resolve(true));
    });
  });
}
