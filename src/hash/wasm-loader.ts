/**
 * Loads bloomkit's tiny WebAssembly modules (hash/wasm/*.wat, embedded as base64 by
 * scripts/build-wasm.ts) synchronously, with no file access, so the browser-safe core needs no
 * bundler support. Every module is well under the 4 KiB that browsers allow to compile on the main
 * thread. Each module imports its memory (`env.memory`), so that modules can share one scratch
 * memory and a filter kernel can bring a memory of its own. Where WebAssembly is missing or
 * forbidden (a CSP without 'wasm-unsafe-eval'), compiling yields null and callers fall back to
 * their JavaScript cores, which compute the same values.
 */

/** A WebAssembly memory (the little of its API used here). */
export interface WasmMemory {
  readonly buffer: ArrayBuffer;
  grow(pages: number): number;
}

/** The little of the WebAssembly API used here (the core is type-checked without DOM or Node types). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
  Memory: new (descriptor: { initial: number }) => WasmMemory;
}

function wasmApi(): WasmApi | undefined {
  return (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
}

/** The platform's base64 decoder (browsers, Node.js 16+, Deno, Bun, workers). */
declare const atob: (data: string) => string;

/** Decodes standard base64. */
function base64ToBytes(b64: string): Uint8Array {
  const binary = atob(b64);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

/**
 * A WebAssembly memory of `pages` 64 KiB pages, or null where WebAssembly is missing or the memory
 * cannot be had (a memory needs no compilation, so a CSP that forbids wasm still allows it).
 */
export function newMemory(pages: number): WasmMemory | null {
  try {
    const api = wasmApi();
    return api === undefined ? null : new api.Memory({ initial: pages });
  } catch {
    return null;
  }
}

/**
 * Instantiates a module over a memory: a new instance each call, or null where the module cannot
 * be compiled or instantiated here.
 */
export type WasmInstantiator<T> = (memory: WasmMemory) => T | null;

/**
 * The module embedded as `base64`, compiled on the first instantiation (never at import), then
 * instantiated any number of times. A host without `atob` or WebAssembly gets null: the
 * JavaScript cores run there.
 */
export function lazyWasm<T>(base64: string): WasmInstantiator<T> {
  /** undefined: not compiled yet; null: it cannot be compiled here. */
  let compiled: object | null | undefined;
  return (memory) => {
    const api = wasmApi();
    try {
      compiled ??= api === undefined ? null : new api.Module(base64ToBytes(base64));
      if (compiled === null || api === undefined) return null;
      return new api.Instance(compiled, { env: { memory } }).exports as T;
    } catch {
      compiled ??= null;
      return null;
    }
  };
}
