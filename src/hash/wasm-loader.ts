/**
 * Loads bloomkit's tiny WebAssembly modules (hash/wasm/*.wat, embedded as base64 by
 * scripts/build-wasm.ts) synchronously, with no file access, so the browser-safe core needs no
 * bundler support. Every module is well under the 4 KiB that browsers allow to compile on the main
 * thread. Where WebAssembly is missing or forbidden (a CSP without 'wasm-unsafe-eval'), loading
 * yields null and callers fall back to their JavaScript cores, which compute the same values.
 */

/** The little of the WebAssembly API used here (the core is type-checked without DOM or Node types). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}

/** A compiled module that can be instantiated any number of times. */
export interface WasmModule<T> {
  /** A new instance (with its own memory), or null if instantiation fails. */
  instantiate(): T | null;
}

/** Decodes standard base64 (no browser or Node helper needed). */
export function base64ToBytes(b64: string): Uint8Array {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const clean = b64.replace(/=+$/, '');
  const out = new Uint8Array(Math.floor((clean.length * 3) / 4));
  let bits = 0;
  let value = 0;
  let p = 0;
  for (let i = 0; i < clean.length; i++) {
    value = ((value << 6) | alphabet.indexOf(clean[i]!)) & 0xffffff;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[p++] = (value >>> bits) & 0xff;
    }
  }
  return out;
}

/** Compiles the module in `base64`, or returns null where WebAssembly is unavailable. */
export function compileWasm<T>(base64: string): WasmModule<T> | null {
  try {
    const api = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
    if (api === undefined) return null;
    const module = new api.Module(base64ToBytes(base64));
    return {
      instantiate(): T | null {
        try {
          return new api.Instance(module, {}).exports as T;
        } catch {
          return null;
        }
      },
    };
  } catch {
    return null;
  }
}
