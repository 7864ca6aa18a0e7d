/**
 * A watchdog for a server a test starts (redis-server, postgres): if this process dies without
 * running its exit hooks (SIGKILL, a crash), the watchdog SIGKILLs the server and removes its
 * temporary folder, so no server outlives the test run.
 *
 * The watchdog is a `sh` blocked on reading a pipe from this process; nothing polls. When the
 * server exits, this process writes a line into the pipe and the watchdog ends quietly. When this
 * process dies first, the kernel closes the pipe unwritten, the read fails, and the watchdog kills
 * the server, waits a second for it to let go of its files, and removes `dir`. (The loop it
 * replaces, `kill -0` and `sleep 1` once a second per server, started about a thousand `sleep`
 * processes in a full test run.)
 */
import { type ChildProcess, spawn } from 'node:child_process';

const SCRIPT =
  'if read -r _; then exit 0; fi; kill -9 "$1" 2>/dev/null; ' +
  'if [ -n "$2" ]; then sleep 1; rm -rf -- "$2"; fi';

/**
 * Starts the watchdog of `server` (which must have a pid); `dir`, when given, is removed after a
 * kill. Returns the watchdog's process, or undefined when there is no `sh` (the exit and signal
 * hooks of the caller still apply). The watchdog never keeps this process alive.
 */
export function watchdog(
  server: ChildProcess,
  dir: string | undefined,
  name: string,
): ChildProcess | undefined {
  if (server.pid === undefined) return undefined;
  let dog: ChildProcess;
  try {
    dog = spawn('sh', ['-c', SCRIPT, name, String(server.pid), dir ?? ''], {
      stdio: ['pipe', 'ignore', 'ignore'],
    });
  } catch {
    return undefined;
  }
  const pipe = dog.stdin!;
  dog.on('error', () => undefined);
  pipe.on('error', () => undefined); // the watchdog is gone already (EPIPE)
  const release = (): void => {
    if (!pipe.destroyed) pipe.end('exited\n');
  };
  if (server.exitCode !== null || server.signalCode !== null) release();
  else server.once('exit', release);
  dog.unref();
  (pipe as unknown as { unref(): void }).unref();
  return dog;
}
