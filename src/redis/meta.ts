/**
 * Reading a Redis hash reply (the metadata, src/sharded/meta.ts) from any reply shape the client
 * libraries give.
 */

import type { Meta } from '../sharded/store.js';

function text(value: unknown): string {
  return typeof value === 'string' ? value : String(value);
}

/** A hash reply as field → value: a flat array (RESP2, Lua) or a map/object (RESP3). */
export function toMeta(reply: unknown): Meta {
  const meta: Meta = {};
  if (Array.isArray(reply)) {
    for (let i = 0; i + 1 < reply.length; i += 2) meta[text(reply[i])] = text(reply[i + 1]);
  } else if (reply instanceof Map) {
    for (const [field, value] of reply) meta[text(field)] = text(value);
  } else if (reply !== null && typeof reply === 'object') {
    for (const [field, value] of Object.entries(reply)) meta[field] = text(value);
  }
  return meta;
}
