;; MurmurHash3 x64 128 (Austin Appleby, public domain) in WebAssembly, for bloomkit's hot path.
;; Memory layout (all offsets in bytes):
;;   [0, 16)        h1 then h2, 8 bytes LE each
;;   [64, 1088)     mitz64: the word index (i32) of each of the k probes, k <= 255
;;   [1088, 2112)   mitz64: the bit mask (i32, one bit set) of each probe
;;   [2112, ...)    the key's bytes, written by JavaScript; the caller keeps 16 spare bytes after
;;                  the key because the tail is read with whole 8-byte loads and masked
;;   [$base, ...)   for bloom_has / bloom_add: a filter's bit array (32-bit LE words), placed by the
;;                  caller after the largest key it will write (bloomkit uses 65536)
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
  ;; The probe walk shared by three exports. mode 0: write each probe's word index and mask to
  ;; [64, 1088) and [1088, 2112); mode 1: test the bits of the bit array at byte offset $base and
  ;; return 0 at the first clear one, else 1; mode 2: set them and return how many were clear.
  ;;
  ;; Probe i is idx_i = x_i mod m with x_i = (h1 + i*h2) mod 2^63. With d = h2 mod 2^63:
  ;; x_(i+1) = x_i + d, less 2^63 when that wraps, so idx_(i+1) = idx_i + (d mod m) + (m - 2^63 mod m)
  ;; on a wrap, reduced by at most two subtractions of m; only two divisions-by-multiply per key.
  ;; Even and odd probes are walked as two interleaved chains (step 2d) so that the CPU overlaps
  ;; them; every update is branch-free, since wraps and reductions are coin flips for random keys.
  (func $walk (param $len i32) (param $k i32) (param $mf f64) (param $p63f f64) (param $inv f64)
    (param $mode i32) (param $base i32) (result i32)
    (local $m i64) (local $p63 i64) (local $wrapadd i64)
    (local $x i64) (local $d i64) (local $d2 i64) (local $step i64) (local $step2 i64)
    (local $xa i64) (local $ia i64) (local $xb i64) (local $ib i64)
    (local $i i32) (local $o i32)
    (local $mask i32) (local $addr i32) (local $old i32) (local $added i32)
    (call $murmur (local.get $len) (i32.const 0))
    (local.set $m (i64.trunc_sat_f64_s (local.get $mf)))
    (local.set $p63 (i64.trunc_sat_f64_s (local.get $p63f)))
    (local.set $wrapadd (i64.sub (local.get $m) (local.get $p63)))
    (local.set $x (i64.and (i64.load (i32.const 0)) (i64.const 0x7fffffffffffffff)))
    (local.set $d (i64.and (i64.load (i32.const 8)) (i64.const 0x7fffffffffffffff)))
    ;; x mod m without a 64-bit division (slow on many CPUs): q = trunc(x · (1/m)) in f64 is off
    ;; by at most a few units (m >= 64, x < 2^63), corrected by adding or subtracting m.
    (local.set $ia
      (i64.sub (local.get $x)
        (i64.mul (i64.trunc_sat_f64_s (f64.mul (f64.convert_i64_s (local.get $x)) (local.get $inv)))
          (local.get $m))))
    (block $done_ia
      (loop $fix_ia
        (br_if $done_ia
          (i32.and (i64.ge_s (local.get $ia) (i64.const 0)) (i64.lt_s (local.get $ia) (local.get $m))))
        (local.set $ia
          (select (i64.add (local.get $ia) (local.get $m)) (i64.sub (local.get $ia) (local.get $m))
            (i64.lt_s (local.get $ia) (i64.const 0))))
        (br $fix_ia)))
    (local.set $step
      (i64.sub (local.get $d)
        (i64.mul (i64.trunc_sat_f64_s (f64.mul (f64.convert_i64_s (local.get $d)) (local.get $inv)))
          (local.get $m))))
    (block $done_step
      (loop $fix_step
        (br_if $done_step
          (i32.and (i64.ge_s (local.get $step) (i64.const 0)) (i64.lt_s (local.get $step) (local.get $m))))
        (local.set $step
          (select (i64.add (local.get $step) (local.get $m)) (i64.sub (local.get $step) (local.get $m))
            (i64.lt_s (local.get $step) (i64.const 0))))
        (br $fix_step)))
    ;; chain A starts at probe 0, chain B at probe 1; both advance by d2 = 2d mod 2^63, whose
    ;; residue is 2·step, plus (m - 2^63 mod m) when 2d itself wrapped (d >= 2^62).
    (local.set $xa (local.get $x))
    (local.set $xb (i64.add (local.get $x) (local.get $d)))
    (local.set $ib
      (i64.add (i64.add (local.get $ia) (local.get $step))
        (select (local.get $wrapadd) (i64.const 0) (i64.lt_s (local.get $xb) (i64.const 0)))))
    (local.set $xb (i64.and (local.get $xb) (i64.const 0x7fffffffffffffff)))
    (local.set $ib
          (select (i64.sub (local.get $ib) (local.get $m)) (local.get $ib)
            (i64.ge_u (local.get $ib) (local.get $m))))
        (local.set $ib
          (select (i64.sub (local.get $ib) (local.get $m)) (local.get $ib)
            (i64.ge_u (local.get $ib) (local.get $m))))
    (local.set $d2 (i64.and (i64.shl (local.get $d) (i64.const 1)) (i64.const 0x7fffffffffffffff)))
    (local.set $step2
      (i64.add (i64.shl (local.get $step) (i64.const 1))
        (select (local.get $wrapadd) (i64.const 0)
          (i64.ne (i64.shr_u (local.get $d) (i64.const 62)) (i64.const 0)))))
    (local.set $step2
          (select (i64.sub (local.get $step2) (local.get $m)) (local.get $step2)
            (i64.ge_u (local.get $step2) (local.get $m))))
        (local.set $step2
          (select (i64.sub (local.get $step2) (local.get $m)) (local.get $step2)
            (i64.ge_u (local.get $step2) (local.get $m))))
    (local.set $o (i32.const 64))
    (block $done
      (loop $probes
        (br_if $done (i32.ge_u (local.get $i) (local.get $k)))
        (local.set $mask (i32.shl (i32.const 1) (i32.wrap_i64 (local.get $ia))))
        (if (i32.eqz (local.get $mode))
          (then
            (i32.store (local.get $o) (i32.wrap_i64 (i64.shr_u (local.get $ia) (i64.const 5))))
            (i32.store offset=1024 (local.get $o) (local.get $mask)))
          (else
            (local.set $addr
              (i32.add (local.get $base)
                (i32.shl (i32.wrap_i64 (i64.shr_u (local.get $ia) (i64.const 5))) (i32.const 2))))
            (local.set $old (i32.load (local.get $addr)))
            (if (i32.eq (local.get $mode) (i32.const 1))
              (then
                (if (i32.eqz (i32.and (local.get $old) (local.get $mask)))
                  (then (return (i32.const 0)))))
              (else
                (i32.store (local.get $addr) (i32.or (local.get $old) (local.get $mask)))
                (local.set $added
                  (i32.add (local.get $added)
                    (i32.eqz (i32.and (local.get $old) (local.get $mask)))))))))
        (br_if $done (i32.ge_u (i32.add (local.get $i) (i32.const 1)) (local.get $k)))
        (local.set $mask (i32.shl (i32.const 1) (i32.wrap_i64 (local.get $ib))))
        (if (i32.eqz (local.get $mode))
          (then
            (i32.store offset=4 (local.get $o) (i32.wrap_i64 (i64.shr_u (local.get $ib) (i64.const 5))))
            (i32.store offset=1028 (local.get $o) (local.get $mask)))
          (else
            (local.set $addr
              (i32.add (local.get $base)
                (i32.shl (i32.wrap_i64 (i64.shr_u (local.get $ib) (i64.const 5))) (i32.const 2))))
            (local.set $old (i32.load (local.get $addr)))
            (if (i32.eq (local.get $mode) (i32.const 1))
              (then
                (if (i32.eqz (i32.and (local.get $old) (local.get $mask)))
                  (then (return (i32.const 0)))))
              (else
                (i32.store (local.get $addr) (i32.or (local.get $old) (local.get $mask)))
                (local.set $added
                  (i32.add (local.get $added)
                    (i32.eqz (i32.and (local.get $old) (local.get $mask)))))))))
        (local.set $xa (i64.add (local.get $xa) (local.get $d2)))
        (local.set $ia
          (i64.add (i64.add (local.get $ia) (local.get $step2))
            (select (local.get $wrapadd) (i64.const 0) (i64.lt_s (local.get $xa) (i64.const 0)))))
        (local.set $xa (i64.and (local.get $xa) (i64.const 0x7fffffffffffffff)))
        (local.set $ia
          (select (i64.sub (local.get $ia) (local.get $m)) (local.get $ia)
            (i64.ge_u (local.get $ia) (local.get $m))))
        (local.set $ia
          (select (i64.sub (local.get $ia) (local.get $m)) (local.get $ia)
            (i64.ge_u (local.get $ia) (local.get $m))))
        (local.set $xb (i64.add (local.get $xb) (local.get $d2)))
        (local.set $ib
          (i64.add (i64.add (local.get $ib) (local.get $step2))
            (select (local.get $wrapadd) (i64.const 0) (i64.lt_s (local.get $xb) (i64.const 0)))))
        (local.set $xb (i64.and (local.get $xb) (i64.const 0x7fffffffffffffff)))
        (local.set $ib
          (select (i64.sub (local.get $ib) (local.get $m)) (local.get $ib)
            (i64.ge_u (local.get $ib) (local.get $m))))
        (local.set $ib
          (select (i64.sub (local.get $ib) (local.get $m)) (local.get $ib)
            (i64.ge_u (local.get $ib) (local.get $m))))
        (local.set $o (i32.add (local.get $o) (i32.const 8)))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $probes)))
    (if (result i32) (i32.eq (local.get $mode) (i32.const 2))
      (then (local.get $added))
      (else (i32.const 1))))
  ;; Guava MURMUR128_MITZ_64 probes of the key at 2112 for m bits, written to memory (mode 0).
  (func (export "mitz64") (param $len i32) (param $k i32) (param $mf f64) (param $p63f f64)
    (param $inv f64)
    (drop (call $walk (local.get $len) (local.get $k) (local.get $mf) (local.get $p63f) (local.get $inv)
      (i32.const 0) (i32.const 0))))
  ;; 1 if all k MITZ_64 bits of the key are set in the bit array at $base, else 0.
  (func (export "bloom_has") (param $len i32) (param $k i32) (param $mf f64) (param $p63f f64) (param $inv f64)
    (param $base i32) (result i32)
    (call $walk (local.get $len) (local.get $k) (local.get $mf) (local.get $p63f) (local.get $inv)
      (i32.const 1) (local.get $base)))
  ;; Sets the k MITZ_64 bits of the key in the bit array at $base; returns how many were clear.
  (func (export "bloom_add") (param $len i32) (param $k i32) (param $mf f64) (param $p63f f64) (param $inv f64)
    (param $base i32) (result i32)
    (call $walk (local.get $len) (local.get $k) (local.get $mf) (local.get $p63f) (local.get $inv)
      (i32.const 2) (local.get $base))))
