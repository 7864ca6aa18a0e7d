;; bloomkit's blocked-filter kernel: tests or sets the probes of a chunk of keys whose XXH64
;; hashes are already computed (xxh64.wat's xxh64_batch, over the same memory), with the filter's
;; bits in this memory. Positions are those of BlockedBloomFilter.add / has
;; (filters/blocked/filter.ts): block = floor(lo32(h) * z / 2^32); x = hi32(h); k times: bit x >>> 23
;; of the block (word (x >>> 28), bit (x >>> 23) & 31), x = x * 0x9e3779b9 mod 2^32.
;;
;; The memory is imported: a blocked filter's kernel memory (filters/blocked/kernel.ts), laid out
;; as the scratch (hash/scratch.ts) with the filter's bits after it. Used here:
;;   [8, 12)          the last touching pass's value (kept so that its loads are not dropped)
;;   [8448, 9472)     a chunk's per-key result bytes
;;   [14336, 22528)   a chunk's hashes, 8 bytes per key ([lo, hi]); the first pass overwrites
;;                    each lo with the byte address of the key's block
;;   [$base, ...)     the filter's 512-bit blocks, 64 bytes each
;; Build: npm run build:wasm (compiles this file with wabt into blocked-wasm.ts).
(module
  (import "env" "memory" (memory 2))
  ;; Pass 1 computes every key's block and loads its first and last word (a block spans two cache
  ;; lines unless the bits start 64-byte aligned), so that the misses of the whole chunk are in
  ;; flight at once; pass 2 probes, mostly in cache. Mode 1 tests: key i's byte at `out` + i is 1
  ;; if all its bits are set, and the result is how many were. Mode 2 sets, in key order: the byte
  ;; is 1 if the key set a bit (was new), and the result is the number of bits it set in all.
  ;; Touching instead the block of the key 8, 16 or 32 places ahead inside pass 2 (fewer misses in
  ;; flight) measured 1.5 to 1.7x slower at 10M URL keys and no faster at 1M. Touching each key's
  ;; block inside the hash loop, right after its hash (xxh64.wat computing the block address;
  ;; pass 1 skipped), measured 0.79 to 0.90x at 3M URL keys (bench/kernels.ts): a missing load
  ;; holds the reorder buffer, which then spans only a key or two of hashing, so few misses are
  ;; in flight, where this pass has a whole chunk's. Without pass 1 the batch takes 1.5 to 2.5x
  ;; as long at 10M URL keys; loading only the first word (a kernel's blocks are 64-byte aligned,
  ;; one cache line each) measured the same as loading both, within the noise of two runs.
  (func (export "batch") (param $h i32) (param $count i32) (param $base i32)
    (param $blocks i32) (param $k i32) (param $mode i32) (param $out i32) (result i32)
    (local $j i32) (local $p i32) (local $b i32) (local $x i32) (local $i i32) (local $w i32)
    (local $m i32) (local $old i32) (local $bit i32) (local $acc i32) (local $sum i32)
    (local $t i32)
    (local.set $p (local.get $h))
    (block $touched
      (loop $touch
        (br_if $touched (i32.ge_u (local.get $j) (local.get $count)))
        (local.set $b
          (i32.add (local.get $base)
            (i32.shl
              (i32.wrap_i64
                (i64.shr_u
                  (i64.mul (i64.extend_i32_u (i32.load (local.get $p)))
                    (i64.extend_i32_u (local.get $blocks)))
                  (i64.const 32)))
              (i32.const 6))))
        (i32.store (local.get $p) (local.get $b))
        (local.set $t
          (i32.or (local.get $t)
            (i32.or (i32.load (local.get $b)) (i32.load offset=60 (local.get $b)))))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $touch)))
    (i32.store (i32.const 8) (local.get $t))
    (local.set $p (local.get $h))
    (local.set $j (i32.const 0))
    (block $done
      (loop $keys
        (br_if $done (i32.ge_u (local.get $j) (local.get $count)))
        (local.set $b (i32.load (local.get $p)))
        (local.set $x (i32.load offset=4 (local.get $p)))
        (local.set $i (local.get $k))
        (if (i32.eq (local.get $mode) (i32.const 1))
          (then
            ;; AND of the probed bits, branch-free (shr_u takes the shift count mod 32).
            (local.set $acc (i32.const 1))
            (loop $test
              (local.set $acc
                (i32.and (local.get $acc)
                  (i32.shr_u
                    (i32.load
                      (i32.add (local.get $b)
                        (i32.shl (i32.shr_u (local.get $x) (i32.const 28)) (i32.const 2))))
                    (i32.shr_u (local.get $x) (i32.const 23)))))
              (local.set $x (i32.mul (local.get $x) (i32.const 0x9e3779b9)))
              (local.set $i (i32.sub (local.get $i) (i32.const 1)))
              (br_if $test (local.get $i)))
            (local.set $sum (i32.add (local.get $sum) (local.get $acc))))
          (else
            ;; Branch-free stores: whether a bit was new is a coin flip in a half-full filter.
            (local.set $acc (i32.const 0))
            (loop $set
              (local.set $w
                (i32.add (local.get $b)
                  (i32.shl (i32.shr_u (local.get $x) (i32.const 28)) (i32.const 2))))
              (local.set $m (i32.shl (i32.const 1) (i32.shr_u (local.get $x) (i32.const 23))))
              (local.set $old (i32.load (local.get $w)))
              (i32.store (local.get $w) (i32.or (local.get $old) (local.get $m)))
              (local.set $bit (i32.and (i32.xor (local.get $old) (i32.const -1)) (local.get $m)))
              (local.set $acc (i32.or (local.get $acc) (local.get $bit)))
              (local.set $sum (i32.add (local.get $sum) (i32.ne (local.get $bit) (i32.const 0))))
              (local.set $x (i32.mul (local.get $x) (i32.const 0x9e3779b9)))
              (local.set $i (i32.sub (local.get $i) (i32.const 1)))
              (br_if $set (local.get $i)))
            (local.set $acc (i32.ne (local.get $acc) (i32.const 0)))))
        (i32.store8 (i32.add (local.get $out) (local.get $j)) (local.get $acc))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $keys)))
    (local.get $sum)))
