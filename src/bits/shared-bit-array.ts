/**
 * Bits in a `SharedArrayBuffer`, shared by worker threads: the TypeScript form of Guava's
 * lock-free `LockFreeBitArray`.
 *
 * Guarantee: concurrent `set` calls from any number of threads never lose a bit (each is one
 * `Atomics.or`), and `set` returns true in exactly one of several threads racing to set the same
 * bit. Reads are plain loads: a read racing a set may see the bit either way, never a torn word.
 * `bitCount()` is a popcount over the array at the time of the call (O(m/32)); Guava keeps a
 * striped counter instead, which a `SharedArrayBuffer` cannot hold without 64-bit atomics.
 *
 * Send `storage.data.buffer` (a `SharedArrayBuffer`) to a worker with `postMessage`, and wrap it
 * there with `new SharedBitArray(bitSize, new Uint32Array(buffer))`.
 */

import {
  type BitStorage,
  checkBitSize,
  checkSameSize,
  checkWords,
  popcountAll,
} from './bit-array.js';
import { sharedMemory } from './shared-memory.js';

export class SharedBitArray implements BitStorage {
  declare readonly bitSize: number;
  declare readonly data: Uint32Array;

  /**
   * A zeroed shared array, or a view over `data` whose buffer must be a `SharedArrayBuffer`; a
   * `SharedMemoryUnavailableError` where there is none (a page that is not cross-origin isolated).
   */
  constructor(bitSize: number, data?: Uint32Array) {
    this.bitSize = checkBitSize(bitSize);
    if (data === undefined) {
      this.data = new Uint32Array(new (sharedMemory())(bitSize / 8));
    } else {
      if (!(data.buffer instanceof sharedMemory())) {
        throw new TypeError('data must be a view over a SharedArrayBuffer');
      }
      this.data = checkWords(bitSize, data);
    }
  }

  get(index: number): boolean {
    return (this.data[(index / 32) | 0]! & (1 << (index & 31))) !== 0;
  }

  set(index: number): boolean {
    const w = (index / 32) | 0;
    const mask = 1 << (index & 31);
    if ((this.data[w]! & mask) !== 0) return false;
    return (Atomics.or(this.data, w, mask) & mask) === 0;
  }

  setMasked(word: number, mask: number): boolean {
    if ((this.data[word]! & mask) === mask) return false;
    return (Atomics.or(this.data, word, mask) & mask) !== mask;
  }

  setProbes(words: Int32Array, masks: Int32Array, k: number): boolean {
    let changed = false;
    for (let i = 0; i < k; i++) if (this.setMasked(words[i]!, masks[i]!)) changed = true;
    return changed;
  }

  bitCount(): number {
    return popcountAll(this.data);
  }

  clear(): void {
    for (let i = 0; i < this.data.length; i++) Atomics.store(this.data, i, 0);
  }

  orWith(other: BitStorage): void {
    checkSameSize(this, other);
    const b = other.data;
    for (let i = 0; i < b.length; i++) if (b[i] !== 0) Atomics.or(this.data, i, b[i]!);
  }

  andWith(other: BitStorage): void {
    checkSameSize(this, other);
    const b = other.data;
    for (let i = 0; i < b.length; i++) Atomics.and(this.data, i, b[i]!);
  }

  recount(): void {}

  clone(): SharedBitArray {
    const copy = new SharedBitArray(this.bitSize);
    copy.data.set(this.data);
    return copy;
  }
}
