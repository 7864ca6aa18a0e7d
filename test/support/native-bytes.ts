/** Reading and forging bloomkit native containers in tests (see src/formats/native.ts). */
import { crc32c } from '../../src/index.js';

/** The stored CRC-32C trailer of a container: a fingerprint of every byte before it. */
export const trailer = (bytes: Uint8Array): number =>
  new DataView(bytes.buffer, bytes.byteOffset).getUint32(bytes.length - 4, true);

/**
 * Applies `edit` to a copy of a native container (the header is bytes 0..23, the parameters start
 * at byte 24) and re-signs its CRC-32C, so a reader sees a well-formed container with forged
 * fields.
 */
export function forge(bytes: Uint8Array, edit: (v: DataView) => void): Uint8Array {
  const out = bytes.slice();
  edit(new DataView(out.buffer));
  const body = out.length - 4;
  new DataView(out.buffer).setUint32(body, crc32c(out.subarray(0, body)), true);
  return out;
}
