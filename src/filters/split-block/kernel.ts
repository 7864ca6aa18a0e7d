/**
 * The split-block filter's kernel: its 256-bit blocks in a WebAssembly memory of their own, with
 * XXH64 and the split-block probe module (hash/wasm/split-block.wat: the specification's eight
 * salted bits, one per word of the block) instantiated over it (see ../blocked/kernel.ts).
 */
import { WASM_BASE64 } from '../../hash/split-block-wasm.js';
import { lazyWasm } from '../../hash/wasm-loader.js';
import { BlockedKernel, type BlockProbeExports } from '../blocked/kernel.js';
import { SPLIT_BLOCK_BITS } from './sizing.js';

/** The split-block probe module, compiled on its first instantiation. */
const SPLIT_BLOCK_MODULE = /* @__PURE__ */ lazyWasm<BlockProbeExports>(WASM_BASE64);

/** A kernel for `blocks` empty blocks, or null (see `BlockedKernel.create`). */
export function splitBlockKernel(blocks: number): BlockedKernel | null {
  return BlockedKernel.create(blocks, SPLIT_BLOCK_BITS / 8, SPLIT_BLOCK_MODULE);
}
