/**
 * A small static file server for the web page (`bloomkit serve`) or any folder of plain files.
 *
 * Guarantees: only files inside `dir` are served (a path that resolves outside it, through `..`,
 * an encoded slash or a symbolic link, is a 404); only GET and HEAD are answered; every response
 * carries `X-Content-Type-Options: nosniff` and no caching surprises (`Cache-Control: no-cache`,
 * so a rebuilt page is picked up). It binds to 127.0.0.1 unless told otherwise: the page needs no
 * other machine, and nothing it shows is sent anywhere (an empty `host` is refused: Node would
 * take it for every interface).
 *
 * A file that changes while it is served never stops the server: the file is opened first
 * (`O_NONBLOCK`, so a FIFO put in its place cannot block; `O_NOFOLLOW`, so a symbolic link put
 * in place of the checked path is not followed out of `dir`), then checked with `fstat` on the
 * open handle, and what is sent is that handle's bytes. A file removed or replaced meanwhile is a
 * 404, one that cannot be read a 403, any other failure a 500; an error while streaming ends that
 * response only.
 */

import { constants, existsSync } from 'node:fs';
import { type FileHandle, open, realpath, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, extname, join, resolve, sep } from 'node:path';
import { pipeline } from 'node:stream';
import { fileURLToPath } from 'node:url';

export interface ServeOptions {
  /** TCP port; 0 (default) picks a free one. */
  port?: number;
  /**
   * Interface to bind (a name or an address, not empty); default `127.0.0.1` (this machine
   * only). `0.0.0.0` or `::` serves every interface.
   */
  host?: string;
  /** File served for `/`; default `index.html`. */
  index?: string;
}

export interface StaticServer {
  /** `http://host:port/`. */
  readonly url: string;
  readonly port: number;
  /** Stops accepting connections and closes idle ones; resolves when the server is closed. */
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.wasm': 'application/wasm',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
};

/**
 * The folder of the built web page (`npm run build:web` writes dist/web) that ships with this
 * package, or null when it was not built. Looks beside the running module: dist/ (CommonJS
 * bundle), dist/node/ (ESM module files) and src/node/ (running from source).
 */
export function webPageDir(): string | null {
  const here =
    typeof __dirname === 'string'
      ? __dirname
      : typeof import.meta.url === 'string'
        ? dirname(fileURLToPath(import.meta.url))
        : null;
  if (here === null) return null;
  for (const candidate of ['web', '../web', '../../dist/web']) {
    const dir = resolve(here, candidate);
    if (existsSync(join(dir, 'index.html'))) return dir;
  }
  return null;
}

/**
 * Serves the files under `dir` over HTTP. Throws a `TypeError`/`RangeError` for bad options and
 * rejects with the listen error (`EADDRINUSE`, `EACCES`) when the port cannot be bound.
 */
export async function serveStatic(dir: string, options: ServeOptions = {}): Promise<StaticServer> {
  if (typeof dir !== 'string' || dir === '') {
    throw new TypeError(`dir must be a non-empty path, got ${JSON.stringify(dir)}`);
  }
  const port = options.port ?? 0;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new RangeError(`port must be an integer from 0 to 65535, got ${String(port)}`);
  }
  const host = options.host ?? '127.0.0.1';
  if (typeof host !== 'string' || host.trim() === '') {
    throw new RangeError(
      `host must be an interface name or address (0.0.0.0 for every interface), got ${JSON.stringify(host)}`,
    );
  }
  const index = options.index ?? 'index.html';
  const root = await realpath(resolve(dir));
  if (!(await stat(root)).isDirectory())
    throw new RangeError(`dir must be a directory, got ${dir}`);

  const server = createServer((req, res) => {
    handle(root, index, req, res).catch(() => {
      if (!res.headersSent) send(res, 500, 'internal error');
      else res.destroy();
    });
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolveListen();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}/`,
    port: address.port,
    close: () =>
      new Promise<void>((done, reject) => {
        server.close((err) => (err ? reject(err) : done()));
        server.closeIdleConnections();
      }),
  };
}

function send(
  res: ServerResponse,
  status: number,
  text: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'x-content-type-options': 'nosniff',
    ...extra,
  });
  res.end(text);
}

async function handle(
  root: string,
  index: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    send(res, 405, 'method not allowed', { allow: 'GET, HEAD' });
    return;
  }
  let pathname: string;
  try {
    pathname = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
  } catch {
    send(res, 400, 'bad request');
    return;
  }
  if (pathname.includes('\0')) {
    send(res, 400, 'bad request');
    return;
  }
  if (pathname.endsWith('/')) pathname += index;
  const file = await inside(root, join(root, pathname));
  if (file === null) {
    send(res, 404, 'not found');
    return;
  }
  let fh: FileHandle;
  try {
    fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === 'EACCES' || code === 'EPERM') send(res, 403, 'forbidden');
    else if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP')
      send(res, 404, 'not found');
    else send(res, 500, 'internal error');
    return;
  }
  let info: Awaited<ReturnType<FileHandle['stat']>>;
  try {
    info = await fh.stat();
  } catch {
    await fh.close();
    send(res, 500, 'internal error');
    return;
  }
  if (!info.isFile()) {
    await fh.close();
    send(res, 404, 'not found');
    return;
  }
  res.writeHead(200, {
    'content-type': TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream',
    'content-length': String(info.size),
    'cache-control': 'no-cache',
    'x-content-type-options': 'nosniff',
  });
  if (req.method === 'HEAD') {
    await fh.close();
    res.end();
    return;
  }
  // Exactly the length announced; a read error or a client gone ends this response only, and
  // the handle is closed either way.
  if (info.size === 0) {
    await fh.close();
    res.end();
    return;
  }
  pipeline(fh.createReadStream({ start: 0, end: info.size - 1 }), res, () => {});
}

/** The real path of `candidate` if it exists and lies inside `root`, else null. */
async function inside(root: string, candidate: string): Promise<string | null> {
  const real = await realpath(candidate).catch(() => null);
  if (real === null) return null;
  return real === root || real.startsWith(root + sep) ? real : null;
}
