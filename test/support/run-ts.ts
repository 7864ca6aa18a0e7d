/**
 * Runs a TypeScript program in a child Node process (`node --import tsx file ...args`), as a user
 * runs the examples and as a second process of a multi-process test does, or a JavaScript one
 * (`runJs`), and collects its output. No timeout of its own: the calling test's timeout applies.
 */
import { spawn } from 'node:child_process';

export interface TsRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export function runTs(
  file: string,
  args: readonly string[] = [],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<TsRun> {
  return runNode(['--import', 'tsx', file, ...args], options);
}

/** Runs a JavaScript program (`node file ...args`), e.g. a bundle of a TypeScript one. */
export function runJs(
  file: string,
  args: readonly string[] = [],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<TsRun> {
  return runNode([file, ...args], options);
}

function runNode(
  argv: readonly string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv },
): Promise<TsRun> {
  const child = spawn(process.execPath, argv, {
    cwd: options.cwd,
    env: options.env === undefined ? process.env : { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
