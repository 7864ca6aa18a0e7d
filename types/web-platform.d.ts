/**
 * The few Web-platform globals the browser-safe core uses, declared for its own type check
 * (tsconfig.json: ES2022 library, neither Node's nor the DOM's types), so that check proves the
 * core needs nothing more than what browsers, Node, Deno and Bun all provide. Only the members
 * the core calls are declared; tsconfig.node.json (Node's types) and web/tsconfig.json (the
 * DOM's) check the same sources against the full declarations.
 */

interface TextEncoderEncodeIntoResult {
  read: number;
  written: number;
}

declare class TextEncoder {
  encode(input?: string): Uint8Array;
  encodeInto(source: string, destination: Uint8Array): TextEncoderEncodeIntoResult;
}

declare class TextDecoder {
  constructor(label?: string, options?: { fatal?: boolean; ignoreBOM?: boolean });
  decode(input?: ArrayBufferView | ArrayBuffer, options?: { stream?: boolean }): string;
}

interface Event {
  readonly type: string;
}

declare class AbortSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  throwIfAborted(): void;
  addEventListener(
    type: 'abort',
    listener: (event: Event) => void,
    options?: { once?: boolean },
  ): void;
  removeEventListener(type: 'abort', listener: (event: Event) => void): void;
}

declare class AbortController {
  readonly signal: AbortSignal;
  abort(reason?: unknown): void;
}

declare function setTimeout(handler: () => void, timeout?: number): unknown;
declare function clearTimeout(id: unknown): void;

declare var crypto: { getRandomValues<T extends ArrayBufferView>(array: T): T };
