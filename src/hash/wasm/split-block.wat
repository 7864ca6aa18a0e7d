;; bloomkit's split-block (Parquet SBBF) kernel: tests or inserts a chunk of values whose XXH64
;; hashes are already computed (xxh64.wat's xxh64_batch, over the same memory), with the filter's
;; bits in this memory. Positions are those of the Parquet specification and of
;; SplitBlockBloomFilter (filters/split-block/filter.ts): block = floor(hi32(h) * z / 2^32) (the
;; spec's ((h >> 32) * z) >> 32); word i of the block (i = 0..7) gets bit
;; (lo32(h) * SALT[i] mod 2^32) >> 27.
;;
;; The memory is imported: the filter's kernel memory (filters/blocked/kernel.ts), laid out as the
;; scratch (hash/scratch.ts) with the filter's bits after it. Used here:
;;   [8, 12)          the last touching pass's value (kept so that its loads are not dropped)
;;   [96, 128)        the eight salts (this module's data segment)
;;   [8448, 9472)     a chunk's per-value result bytes
;;   [14336, 22528)   a chunk's hashes, 8 bytes per value ([lo, hi]); the first pass overwrites
;;                    each hi with the byte address of the value's block
;;   [$base, ...)     the filter's 256-bit blocks, 32 bytes each
;; Build: npm run build:wasm (compiles this file with wabt into split-block-wasm.ts).
(module
  (import "env" "memory" (memory 2))
  ;; The eight salts of the specification, little-endian u32s, written into [96, 128) of the
  ;; kernel memory when the module is instantiated over it (nothing else there uses those bytes).
  (data (i32.const 96)
    "\7b\13\b6\47" "\91\4d\97\44" "\5b\ad\24\88" "\9d\28\b7\a2"
    "\c7\95\54\70" "\4b\42\f1\2d" "\47\49\fc\9e" "\31\fb\6b\5c")
  ;; Pass 1 computes every value's block and loads it (32 bytes, one cache line: the bits start
  ;; 64-byte aligned in a kernel), so that the misses of the whole chunk are in flight at once;
  ;; pass 2 probes, in order. Mode 1 tests: value i's byte at `out` + i is 1 if all 8 bits are
  ;; set, and the result is how many were. Mode 2 inserts: the byte is 1 if the value set a bit,
  ;; and the result is the number of bits set in all. `$k` is not used (always 8 bits).
  (func (export "batch") (param $h i32) (param $count i32) (param $base i32)
    (param $blocks i32) (param $k i32) (param $mode i32) (param $out i32) (result i32)
    (local $j i32) (local $p i32) (local $b i32) (local $lo i32) (local $r i32) (local $any i32)
    (local $all i32) (local $sum i32) (local $t i32) (local $m i32) (local $old i32) (local $i i32)
    (local.set $p (local.get $h))
    (block $touched
      (loop $touch
        (br_if $touched (i32.ge_u (local.get $j) (local.get $count)))
        (local.set $b
          (i32.add (local.get $base)
            (i32.shl
            (i32.wrap_i64
                (i64.shr_u
                  (i64.mul (i64.extend_i32_u (i32.load offset=4 (local.get $p)))
                    (i64.extend_i32_u (local.get $blocks)))
                  (i64.const 32)))
            (i32.const 5))))
        (i32.store offset=4 (local.get $p) (local.get $b))
        (local.set $t (i32.or (local.get $t) (i32.load (local.get $b))))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $touch)))
    (i32.store (i32.const 8) (local.get $t))
    (local.set $p (local.get $h))
    (local.set $j (i32.const 0))
    (block $done
      (loop $values
        (br_if $done (i32.ge_u (local.get $j) (local.get $count)))
        (local.set $lo (i32.load (local.get $p)))
        (local.set $b (i32.load offset=4 (local.get $p)))
        (local.set $any (i32.const 0))
        (local.set $all (i32.const 1))
        (local.set $i (i32.const 0))
        (loop $words
          ;; Bit (lo * SALT[i]) >> 27 of word i; the salts are at [96, 128).
          (local.set $m
            (i32.shr_u (i32.mul (local.get $lo) (i32.load offset=96 (local.get $i))) (i32.const 27)))
          (local.set $old (i32.load (i32.add (local.get $b) (local.get $i))))
          (if (i32.eq (local.get $mode) (i32.const 2))
            (then
              ;; Branch-free stores: whether a bit was new is a coin flip in a half-full filter.
              (local.set $m (i32.shl (i32.const 1) (local.get $m)))
              (i32.store (i32.add (local.get $b) (local.get $i)) (i32.or (local.get $old) (local.get $m)))
              (local.set $r (i32.and (i32.xor (local.get $old) (i32.const -1)) (local.get $m)))
              (local.set $any (i32.or (local.get $any) (local.get $r)))
              (local.set $sum (i32.add (local.get $sum) (i32.ne (local.get $r) (i32.const 0)))))
            (else
              ;; The AND of the bits, branch-free (shr_u takes the shift count mod 32).
              (local.set $all (i32.and (local.get $all) (i32.shr_u (local.get $old) (local.get $m))))))
          (local.set $i (i32.add (local.get $i) (i32.const 4)))
          (br_if $words (i32.lt_u (local.get $i) (i32.const 32))))
        (if (i32.eq (local.get $mode) (i32.const 2))
          (then (i32.store8 (i32.add (local.get $out) (local.get $j)) (i32.ne (local.get $any) (i32.const 0))))
          (else
            (local.set $all (i32.and (local.get $all) (i32.const 1)))
            (i32.store8 (i32.add (local.get $out) (local.get $j)) (local.get $all))
            (local.set $sum (i32.add (local.get $sum) (local.get $all)))))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (br $values)))
    (local.get $sum)))
