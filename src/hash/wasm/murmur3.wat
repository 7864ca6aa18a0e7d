;; MurmurHash3 x64 128 (Austin Appleby, public domain) in WebAssembly, for bloomkit's hot path.
;; Memory layout (all offsets in bytes):
;;   [0, 16)        h1 then h2, 8 bytes LE each
;;   [64, 1088)     mitz64: the word index (i32) of each of the k probes, k <= 255
;;   [1088, 2112)   mitz64: the bit mask (i32, one bit set) of each probe
;;   [2112, ...)    the key's bytes, written by JavaScript; the caller keeps 16 spare bytes after
;;                  the key because the tail is read with whole 8-byte loads and masked
;; Build: npm run build:wasm (compiles this file with wabt into murmur3-wasm.ts).
(module
  (memory (export "memory") 1)
  (func $murmur (export "murmur3") (param $len i32) (param $seed i32)
    (local $h1 i64) (local $h2 i64) (local $k1 i64) (local $k2 i64)
    (local $p i32) (local $end i32) (local $rem i32)
    (local.set $h1 (i64.extend_i32_u (local.get $seed)))
    (local.set $h2 (local.get $h1))
    (local.set $p (i32.const 2112))
    (local.set $end (i32.add (i32.const 2112) (i32.and (local.get $len) (i32.const -16))))
    (block $done
      (loop $blocks
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $k1 (i64.load (local.get $p)))
        (local.set $k2 (i64.load offset=8 (local.get $p)))
        (local.set $k1 (i64.mul (local.get $k1) (i64.const 0x87c37b91114253d5)))
        (local.set $k1 (i64.rotl (local.get $k1) (i64.const 31)))
        (local.set $k1 (i64.mul (local.get $k1) (i64.const 0x4cf5ad432745937f)))
        (local.set $h1 (i64.xor (local.get $h1) (local.get $k1)))
        (local.set $h1 (i64.rotl (local.get $h1) (i64.const 27)))
        (local.set $h1 (i64.add (local.get $h1) (local.get $h2)))
        (local.set $h1 (i64.add (i64.mul (local.get $h1) (i64.const 5)) (i64.const 0x52dce729)))
        (local.set $k2 (i64.mul (local.get $k2) (i64.const 0x4cf5ad432745937f)))
        (local.set $k2 (i64.rotl (local.get $k2) (i64.const 33)))
        (local.set $k2 (i64.mul (local.get $k2) (i64.const 0x87c37b91114253d5)))
        (local.set $h2 (i64.xor (local.get $h2) (local.get $k2)))
        (local.set $h2 (i64.rotl (local.get $h2) (i64.const 31)))
        (local.set $h2 (i64.add (local.get $h2) (local.get $h1)))
        (local.set $h2 (i64.add (i64.mul (local.get $h2) (i64.const 5)) (i64.const 0x38495ab5)))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $blocks)))
    (local.set $rem (i32.and (local.get $len) (i32.const 15)))
    (if (i32.gt_u (local.get $rem) (i32.const 8))
      (then
        (local.set $k2
          (i64.and (i64.load offset=8 (local.get $p))
            (i64.shr_u (i64.const -1)
              (i64.extend_i32_u (i32.sub (i32.const 128) (i32.shl (local.get $rem) (i32.const 3)))))))
        (local.set $k2 (i64.mul (local.get $k2) (i64.const 0x4cf5ad432745937f)))
        (local.set $k2 (i64.rotl (local.get $k2) (i64.const 33)))
        (local.set $k2 (i64.mul (local.get $k2) (i64.const 0x87c37b91114253d5)))
        (local.set $h2 (i64.xor (local.get $h2) (local.get $k2)))))
    (if (i32.gt_u (local.get $rem) (i32.const 0))
      (then
        (if (i32.gt_u (local.get $rem) (i32.const 8)) (then (local.set $rem (i32.const 8))))
        (local.set $k1
          (i64.and (i64.load (local.get $p))
            (i64.shr_u (i64.const -1)
              (i64.extend_i32_u (i32.sub (i32.const 64) (i32.shl (local.get $rem) (i32.const 3)))))))
        (local.set $k1 (i64.mul (local.get $k1) (i64.const 0x87c37b91114253d5)))
        (local.set $k1 (i64.rotl (local.get $k1) (i64.const 31)))
        (local.set $k1 (i64.mul (local.get $k1) (i64.const 0x4cf5ad432745937f)))
        (local.set $h1 (i64.xor (local.get $h1) (local.get $k1)))))
    (local.set $h1 (i64.xor (local.get $h1) (i64.extend_i32_u (local.get $len))))
    (local.set $h2 (i64.xor (local.get $h2) (i64.extend_i32_u (local.get $len))))
    (local.set $h1 (i64.add (local.get $h1) (local.get $h2)))
    (local.set $h2 (i64.add (local.get $h2) (local.get $h1)))
    (local.set $h1 (i64.xor (local.get $h1) (i64.shr_u (local.get $h1) (i64.const 33))))
    (local.set $h1 (i64.mul (local.get $h1) (i64.const 0xff51afd7ed558ccd)))
    (local.set $h1 (i64.xor (local.get $h1) (i64.shr_u (local.get $h1) (i64.const 33))))
    (local.set $h1 (i64.mul (local.get $h1) (i64.const 0xc4ceb9fe1a85ec53)))
    (local.set $h1 (i64.xor (local.get $h1) (i64.shr_u (local.get $h1) (i64.const 33))))
    (local.set $h2 (i64.xor (local.get $h2) (i64.shr_u (local.get $h2) (i64.const 33))))
    (local.set $h2 (i64.mul (local.get $h2) (i64.const 0xff51afd7ed558ccd)))
    (local.set $h2 (i64.xor (local.get $h2) (i64.shr_u (local.get $h2) (i64.const 33))))
    (local.set $h2 (i64.mul (local.get $h2) (i64.const 0xc4ceb9fe1a85ec53)))
    (local.set $h2 (i64.xor (local.get $h2) (i64.shr_u (local.get $h2) (i64.const 33))))
    (local.set $h1 (i64.add (local.get $h1) (local.get $h2)))
    (local.set $h2 (i64.add (local.get $h2) (local.get $h1)))
    (i64.store (i32.const 0) (local.get $h1))
    (i64.store (i32.const 8) (local.get $h2)))
  ;; Guava MURMUR128_MITZ_64 over a bit array of m bits (m < 2^36, passed as f64 so JavaScript
  ;; needs no BigInt): hashes the key, then for i in 0..k-1 writes the word index (idx >> 5) and
  ;; mask (1 << (idx & 31)) of idx_i = ((h1 + i*h2) & Long.MAX_VALUE) mod m. Only two reductions per
  ;; key: idx_{i+1} = idx_i + (h2' mod m), minus (2^63 mod m) when h1 + i*h2 wraps past 2^63.
  (func (export "mitz64") (param $len i32) (param $k i32) (param $mf f64) (param $p63f f64)
    (local $m i64) (local $p63 i64) (local $x i64) (local $d i64) (local $idx i64) (local $step i64)
    (local $wrapadd i64) (local $i i32) (local $o i32)
    (call $murmur (local.get $len) (i32.const 0))
    (local.set $m (i64.trunc_f64_u (local.get $mf)))
    (local.set $p63 (i64.trunc_f64_u (local.get $p63f)))
    (local.set $wrapadd (i64.sub (local.get $m) (local.get $p63)))
    (local.set $x (i64.and (i64.load (i32.const 0)) (i64.const 0x7fffffffffffffff)))
    (local.set $d (i64.and (i64.load (i32.const 8)) (i64.const 0x7fffffffffffffff)))
    ;; x mod m without a 64-bit division (slow on many CPUs): q = trunc(x / m) in f64 is off by
    ;; at most a few units (m >= 64, x < 2^63), corrected by adding or subtracting m.
    (local.set $idx
      (i64.sub (local.get $x)
        (i64.mul (i64.trunc_f64_u (f64.div (f64.convert_i64_u (local.get $x)) (local.get $mf)))
          (local.get $m))))
    (block $doneidx
      (loop $fixidx
        (br_if $doneidx
          (i32.and (i64.ge_s (local.get $idx) (i64.const 0)) (i64.lt_s (local.get $idx) (local.get $m))))
        (local.set $idx
          (select (i64.add (local.get $idx) (local.get $m)) (i64.sub (local.get $idx) (local.get $m))
            (i64.lt_s (local.get $idx) (i64.const 0))))
        (br $fixidx)))
    (local.set $step
      (i64.sub (local.get $d)
        (i64.mul (i64.trunc_f64_u (f64.div (f64.convert_i64_u (local.get $d)) (local.get $mf)))
          (local.get $m))))
    (block $donestep
      (loop $fixstep
        (br_if $donestep
          (i32.and (i64.ge_s (local.get $step) (i64.const 0)) (i64.lt_s (local.get $step) (local.get $m))))
        (local.set $step
          (select (i64.add (local.get $step) (local.get $m)) (i64.sub (local.get $step) (local.get $m))
            (i64.lt_s (local.get $step) (i64.const 0))))
        (br $fixstep)))
    (local.set $o (i32.const 64))
    (block $done
      (loop $probes
        (br_if $done (i32.ge_u (local.get $i) (local.get $k)))
        (i32.store (local.get $o) (i32.wrap_i64 (i64.shr_u (local.get $idx) (i64.const 5))))
        (i32.store offset=1024 (local.get $o)
          (i32.shl (i32.const 1) (i32.wrap_i64 (local.get $idx))))
        ;; Branch-free (the wrap and the reductions are coin flips for random keys):
        ;; x += d; if x wrapped past 2^63, idx += m - p63; then at most two subtractions of m.
        (local.set $x (i64.add (local.get $x) (local.get $d)))
        (local.set $idx
          (i64.add (i64.add (local.get $idx) (local.get $step))
            (select (local.get $wrapadd) (i64.const 0) (i64.lt_s (local.get $x) (i64.const 0)))))
        (local.set $x (i64.and (local.get $x) (i64.const 0x7fffffffffffffff)))
        (local.set $idx
          (select (i64.sub (local.get $idx) (local.get $m)) (local.get $idx)
            (i64.ge_u (local.get $idx) (local.get $m))))
        (local.set $idx
          (select (i64.sub (local.get $idx) (local.get $m)) (local.get $idx)
            (i64.ge_u (local.get $idx) (local.get $m))))
        (local.set $o (i32.add (local.get $o) (i32.const 4)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $probes)))))
