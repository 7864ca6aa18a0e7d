/**
 * Node's `Buffer` class where the host has one, found on `globalThis` (the browser-safe core
 * imports nothing from Node), else undefined. The string packers call its writers as methods of a
 * `Buffer` over WebAssembly memory (a direct method call, no `.call`).
 */

/** A Node `Buffer`: a Uint8Array with Node's string writers as methods. */
export type NodeBuffer = Uint8Array & {
  /** Writes `s` as UTF-8 at `offset` (U+FFFD for a lone surrogate); returns the bytes written. */
  utf8Write(s: string, offset: number): number;
  /** Copies the UTF-16 code units of `s` at `offset`; returns the bytes written. */
  ucs2Write(s: string, offset: number): number;
};

/** The class itself: its prototype (to test for a writer) and `from` over an ArrayBuffer. */
export const NodeBufferClass = (
  globalThis as unknown as {
    Buffer?: {
      prototype?: Partial<NodeBuffer>;
      from(buffer: ArrayBuffer, offset: number, length: number): NodeBuffer;
    };
  }
).Buffer;
