/**
 * A TCP proxy in front of a Redis server for fault tests: `freeze()` stops forwarding in both
 * directions (the link hangs: nothing is lost or closed, bytes wait in the proxy), `thaw()` lets
 * them through again, `swallowReplies()` drops what the server sends (a reply lost on the way), `cut()`
 * closes every connection (the client reconnects through it), `close()` ends it. It counts the commands the client sent it (top-level RESP
 * arrays), frozen or not, so a test can tell whether a client kept sending after a point.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface RedisProxy {
  /** The proxy's port on 127.0.0.1. */
  readonly port: number;
  readonly url: string;
  /** Stops forwarding (both directions) until `thaw()`. */
  freeze(): void;
  thaw(): void;
  /** Drops every byte the server sends on the current connections, until `cut()`. */
  swallowReplies(): void;
  /** Closes every current connection (both sides); new ones are forwarded normally. */
  cut(): void;
  /** Commands received from clients so far (RESP arrays counted at the top level). */
  received(): number;
  close(): Promise<void>;
}

/** Counts the top-level RESP arrays in a client → server stream (inline commands are not used). */
class CommandCounter {
  count = 0;
  private state: 'start' | 'header' | 'bulkLen' | 'bulk' = 'start';
  private pendingArgs = 0;
  private bulkLeft = 0;
  private line = '';

  push(chunk: Buffer): void {
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (this.state === 'bulk') {
        const take = Math.min(this.bulkLeft, chunk.length - i);
        this.bulkLeft -= take;
        i += take - 1;
        if (this.bulkLeft === 0) {
          this.state = this.pendingArgs === 0 ? 'start' : 'bulkLen';
        }
        continue;
      }
      if (c === 0x0a) {
        const text = this.line.replace(/\r$/, '');
        this.line = '';
        if (this.state === 'start' && text.startsWith('*')) {
          this.count++;
          this.pendingArgs = Number(text.slice(1));
          this.state = this.pendingArgs > 0 ? 'bulkLen' : 'start';
        } else if (this.state === 'bulkLen' && text.startsWith('$')) {
          this.bulkLeft = Number(text.slice(1)) + 2; // payload and CRLF
          this.pendingArgs--;
          this.state = 'bulk';
        }
        continue;
      }
      this.line += String.fromCharCode(c);
    }
  }
}

export async function startProxy(targetPort: number): Promise<RedisProxy> {
  let frozen = false;
  let swallowing = false;
  const pairs: [Socket, Socket][] = [];
  const held: (() => void)[] = [];
  const counter = new CommandCounter();

  const pipe = (from: Socket, to: Socket, count: boolean): void => {
    from.on('data', (chunk: Buffer) => {
      if (count) counter.push(chunk);
      else if (swallowing) return;
      const send = () => to.write(chunk);
      if (frozen) held.push(send);
      else send();
    });
    from.on('close', () => to.destroy());
    from.on('error', () => to.destroy());
  };

  const server: Server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    pairs.push([client, upstream]);
    pipe(client, upstream, true);
    pipe(upstream, client, false);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    freeze: () => {
      frozen = true;
    },
    thaw: () => {
      frozen = false;
      for (const send of held.splice(0)) send();
    },
    swallowReplies: () => {
      swallowing = true;
    },
    cut: () => {
      for (const [a, b] of pairs.splice(0)) {
        a.destroy();
        b.destroy();
      }
      swallowing = false;
    },
    received: () => counter.count,
    close: async () => {
      for (const [a, b] of pairs) {
        a.destroy();
        b.destroy();
      }
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
