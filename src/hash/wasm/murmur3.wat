;; bloomkit's MurmurHash3 kernels: MurmurHash3 x64 128 (Austin Appleby, public domain) with Guava's
;; MURMUR128_MITZ_64 probe walk, per key and over a packed batch of keys, and the classic filter's
;; has/add over a bit array in the same memory. XXH64 is a module of its own (xxh64.wat), so that a
;; bundle hashing with one never carries the other.
;;
;; The memory is imported: the process-wide scratch is one memory that this module and xxh64.wat
;; share (hash/scratch.ts makes it), and a classic filter's kernel instance gets a memory of its own.
;;
;; Scratch layout (byte offsets; the JavaScript side in hash/scratch.ts names the same numbers):
;;   [0, 16)          the last per-key hash: MurmurHash3 h1 then h2 (u64 LE each); XXH64 at [0, 8);
;;                    murmur3 / probe: the key's offset and end (u32) at [0, 8) on the way in
;;   [64, 1088)       probe mode 0: the 32-bit word index of each of the k probes (k <= 255);
;;                    probe modes 1, 2: the key's result byte at 64
;;   [1088, 2112)     probe mode 0: the bit mask of each probe
;;   [4096, 8196)     a batch chunk's key offsets (u32, at most 1024 keys + 1), written by JS
;;   [8448, 9472)     walk_batch modes 1 to 3: one result byte per key of the chunk
;;   [9728, 13828)    a chunk's key ends, when they are not the next key's offset (u32)
;;   [14336, 30720)   a chunk's hashes: 16 bytes per key (MurmurHash3) or 8 (XXH64)
;;   [32768, ...)     key bytes written by JavaScript: one key, or a chunk of packed keys; the
;;                    caller keeps 16 spare bytes after the last key because MurmurHash3 reads its
;;                    tail with whole 8-byte loads and masks
;;   [$base, ...)     probe / walk_batch modes 1 to 3: a classic filter's bit array (32-bit LE
;;                    words), in a per-filter instance whose memory holds nothing else there
;; Batch keys: key i of a chunk is the bytes [$keys + off[i], $keys + end[i]), off[] and end[] being
;; the u32s at $offs and $ends ($ends = $offs + 4 when each key ends where the next begins);
;; $keys may be "negative" (it is i32 arithmetic) so that JavaScript can copy the packed offsets
;; as they are and pass $keys = 32768 - off[first].
;; Build: npm run build:wasm (compiles this file with wabt into murmur3-wasm.ts).
(module
  (import "env" "memory" (memory 2))
  ;; MurmurHash3 (seed 0) of the key at 32768 into [0, 16): a batch of one key whose offset (0)
  ;; and end (`len`) are written to [0, 8) first; the batch reads them before it writes the hash.
  (func $murmur3 (export "murmur3") (param $len i32)
    (i64.store (i32.const 0) (i64.shl (i64.extend_i32_u (local.get $len)) (i64.const 32)))
    (call $murmur3_batch (i32.const 32768) (i32.const 0) (i32.const 4) (i32.const 1) (i32.const 0)))
  ;; MurmurHash3 x64 128 (seed 0) of the `count` keys of a chunk; key i's h1, h2 go to `out` + 16i.
  ;; One pass per 16-byte block, then one for the tail (p = end): its k1 and k2 are the remaining
  ;; bytes loaded whole and masked (zero-padded; a zero lane mixes to zero, so an absent one
  ;; changes nothing), and it skips the rotate-add steps, as MurmurHash3's tail does. The hash and
  ;; its finalizer are written out inside the key loop: V8 does not inline wasm-to-wasm calls.
  (func $murmur3_batch (export "murmur3_batch") (param $keys i32) (param $offs i32) (param $ends i32)
    (param $count i32) (param $out i32)
    (local $a i32) (local $p i32) (local $len i32) (local $end i32)
    (local $h1 i64) (local $h2 i64) (local $k1 i64) (local $k2 i64) (local $bits i64)
    (block $done
      (loop $keys_loop
        (br_if $done (i32.eqz (local.get $count)))
        (local.set $a (i32.load (local.get $offs)))
        (local.set $p (i32.add (local.get $keys) (local.get $a)))
        (local.set $len (i32.sub (i32.load (local.get $ends)) (local.get $a)))
        (local.set $end (i32.add (local.get $p) (i32.and (local.get $len) (i32.const -16))))
        (local.set $h1 (i64.const 0))
        (local.set $h2 (i64.const 0))
        (block $blocks_done
          (loop $blocks
            (br_if $blocks_done (i32.ge_u (local.get $p) (local.get $end)))
            (local.set $h1
              (i64.xor (local.get $h1)
                (i64.mul
                  (i64.rotl (i64.mul (i64.load (local.get $p)) (i64.const 0x87c37b91114253d5)) (i64.const 31))
                  (i64.const 0x4cf5ad432745937f))))
            (local.set $h1
              (i64.add
                (i64.mul (i64.add (i64.rotl (local.get $h1) (i64.const 27)) (local.get $h2)) (i64.const 5))
                (i64.const 0x52dce729)))
            (local.set $h2
              (i64.xor (local.get $h2)
                (i64.mul
                  (i64.rotl (i64.mul (i64.load offset=8 (local.get $p)) (i64.const 0x4cf5ad432745937f)) (i64.const 33))
                  (i64.const 0x87c37b91114253d5))))
            (local.set $h2
              (i64.add
                (i64.mul (i64.add (i64.rotl (local.get $h2) (i64.const 31)) (local.get $h1)) (i64.const 5))
                (i64.const 0x38495ab5)))
            (local.set $p (i32.add (local.get $p) (i32.const 16)))
            (br $blocks)))
        ;; The tail: 8·(len & 15) bits; k1 keeps up to 64 of them, k2 the rest (zero-padded; a zero
        ;; lane mixes to zero, so an absent one changes nothing).
        (local.set $bits (i64.extend_i32_u (i32.shl (i32.and (local.get $len) (i32.const 15)) (i32.const 3))))
        (local.set $k2 (i64.and (i64.load offset=8 (local.get $p))
          (select (i64.sub (i64.shl (i64.const 1) (i64.sub (local.get $bits) (i64.const 64))) (i64.const 1))
            (i64.const 0) (i64.gt_u (local.get $bits) (i64.const 64)))))
        (local.set $k1 (i64.and (i64.load (local.get $p))
          (select (i64.const -1) (i64.sub (i64.shl (i64.const 1) (local.get $bits)) (i64.const 1))
            (i64.ge_u (local.get $bits) (i64.const 64)))))
        (local.set $h1
          (i64.xor (local.get $h1)
            (i64.mul (i64.rotl (i64.mul (local.get $k1) (i64.const 0x87c37b91114253d5)) (i64.const 31))
              (i64.const 0x4cf5ad432745937f))))
        (local.set $h2
          (i64.xor (local.get $h2)
            (i64.mul (i64.rotl (i64.mul (local.get $k2) (i64.const 0x4cf5ad432745937f)) (i64.const 33))
              (i64.const 0x87c37b91114253d5))))
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
        (i64.store (local.get $out) (local.get $h1))
        (i64.store offset=8 (local.get $out) (i64.add (local.get $h2) (local.get $h1)))
        (local.set $offs (i32.add (local.get $offs) (i32.const 4)))
        (local.set $ends (i32.add (local.get $ends) (i32.const 4)))
        (local.set $out (i32.add (local.get $out) (i32.const 16)))
        (local.set $count (i32.sub (local.get $count) (i32.const 1)))
        (br $keys_loop))))
  ;; The MITZ_64 walk (mode 0, 1 or 2 as walk_batch's) of the key at 32768, hashed into [0, 16)
  ;; first: a batch of one. Mode 0 writes the k probes to [64, 2112) (word indexes at 64 + 4i,
  ;; masks at 1088 + 4i); modes 1 and 2 test or set them in the bit array at `base` and return
  ;; 1/0 or the bits that were clear.
  (func (export "probe") (param $len i32) (param $k i32) (param $mf f64) (param $p63f f64) (param $inv f64)
    (param $mode i32) (param $base i32) (result i32)
    (local $r i32)
    (call $murmur3 (local.get $len))
    (local.set $r (call $walk_batch (i32.const 0) (i32.const 1) (local.get $k) (local.get $mf)
      (local.get $p63f) (local.get $inv) (local.get $base) (local.get $mode) (i32.const 64)))
    ;; mode 0 put the masks right after the k word indexes; they belong at 1088.
    (if (i32.eqz (local.get $mode))
      (then
        (memory.copy (i32.const 1088) (i32.add (i32.const 64) (i32.shl (local.get $k) (i32.const 2)))
          (i32.shl (local.get $k) (i32.const 2)))))
    (local.get $r))
  ;; Guava MURMUR128_MITZ_64 walks over a bit array of m bits (m < 2^36, passed as f64 so that
  ;; JavaScript needs no BigInt, with p63 = 2^63 mod m and inv = 1/m), of the `count` hashes (h1,
  ;; h2: 16 bytes each) at `hashes`: probe i of a key is idx_i = x_i mod m with
  ;; x_i = (h1 + i*h2) mod 2^63, its bit (idx & 31) of 32-bit LE word (idx >> 5). With
  ;; d = h2 mod 2^63: x_(i+1) = x_i + d, less 2^63 when that wraps, so
  ;; idx_(i+1) = idx_i + (d mod m) + (m - 2^63 mod m) on a wrap, reduced by at most two
  ;; subtractions of m; only two divisions-by-multiply per key. Even and odd probes are walked as
  ;; two interleaved chains (step 2d) so that the CPU overlaps them; every update is branch-free,
  ;; since wraps and reductions are coin flips for random keys. Mode 0: key i's k word
  ;; indexes go to `out` + 8ki and its k masks to `out` + 8ki + 4k. Modes 1 and 3: test them in the
  ;; bit array at `base`, mode 2 sets them; key i's answer (1/0, or the bits it set) is the byte at
  ;; `out` + i. Returns the keys found (modes 1, 3) or the bits set (mode 2).
  ;; Modes 2 and 3 go a group of keys at a time (16 for mode 2; 64 for mode 3, fewer when k > 192,
  ;; so that a group's lists fit [32768, 131072)): their probes are walked into [32768, ...) (the
  ;; chunk's keys are hashed by then), every probed word is loaded once (independent loads: the
  ;; cache misses of the group in flight at once), then the bits are set (mode 2, key by key, in
  ;; order, so a key repeated in the chunk sees the bits its first copy set) or tested (mode 3,
  ;; branch-free: the words are in cache by then). On a 14 MB filter with k = 20 mode 2 took 2.4x
  ;; less time than walking and setting key by key. Mode 1 walks key by key and stops at the first
  ;; clear bit (absent keys usually need one or two probes): the faster test while most probes
  ;; hit the caches; mode 3 is faster once they do not (URL keys, k = 7, CPU time per test: 1.0
  ;; to 1.6x less for present keys and 1.0 to 1.1x less for absent ones on a 12 MB array, more on
  ;; 7.2 MB and less; hash/hasher.ts GROUPED_TEST_BYTES chooses). The walk is written out inside
  ;; the key loop (V8 does not inline wasm-to-wasm calls), and m's constants are set up once.
  (func $walk_batch (export "walk_batch") (param $hashes i32) (param $count i32) (param $k i32) (param $mf f64)
    (param $p63f f64) (param $inv f64) (param $base i32) (param $mode i32) (param $out i32) (result i32)
    (local $m i64) (local $p63 i64) (local $wrapadd i64)
    (local $x i64) (local $d i64) (local $d2 i64) (local $step i64) (local $step2 i64)
    (local $xa i64) (local $ia i64) (local $xb i64) (local $ib i64)
    (local $i i32) (local $p i32) (local $r i32) (local $sum i32) (local $o i32) (local $hp i32)
    (local $j i32) (local $per i32) (local $mo i32) (local $q i32) (local $end i32) (local $t i32)
    (local $addr i32) (local $old i32) (local $mask i32) (local $group i32) (local $first i32)
    (local.set $m (i64.trunc_sat_f64_s (local.get $mf)))
    (local.set $p63 (i64.trunc_sat_f64_s (local.get $p63f)))
    (local.set $wrapadd (i64.sub (local.get $m) (local.get $p63)))
    (local.set $mo (i32.shl (local.get $k) (i32.const 2)))
    (local.set $per (i32.shl (local.get $k) (i32.const 3)))
    (local.set $group (i32.const 16))
    (if (i32.eq (local.get $mode) (i32.const 3))
      (then
        (local.set $group (i32.div_u (i32.const 98304) (local.get $per)))
        (if (i32.gt_u (local.get $group) (i32.const 64)) (then (local.set $group (i32.const 64))))))
    (block $done
      (loop $keys_loop
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        ;; Where the probes go: mode 0, the caller's lists; modes 2 and 3, the group's (key j's
        ;; k word indexes at 32768 + 8kj, its masks after them); mode 1 lists nothing.
        (local.set $o
          (select (i32.add (local.get $out) (i32.mul (local.get $i) (local.get $per)))
            (i32.add (i32.const 32768) (i32.mul (local.get $j) (local.get $per)))
            (i32.eqz (local.get $mode))))
        (local.set $hp (i32.add (local.get $hashes) (i32.shl (local.get $i) (i32.const 4))))
        (local.set $x (i64.and (i64.load (local.get $hp)) (i64.const 0x7fffffffffffffff)))
        (local.set $d (i64.and (i64.load offset=8 (local.get $hp)) (i64.const 0x7fffffffffffffff)))
        ;; x mod m without a 64-bit division (slow on many CPUs): q = trunc(x · (1/m)) in f64 is
        ;; off by at most a few units (m >= 64, x < 2^63), corrected by adding or subtracting m.
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
        (local.set $r (i32.const 1))
        (local.set $p (i32.const 0))
        (block $walked
          (loop $probes
            (br_if $walked (i32.ge_u (local.get $p) (local.get $k)))
            (local.set $mask (i32.shl (i32.const 1) (i32.wrap_i64 (local.get $ia))))
            (if (i32.eq (local.get $mode) (i32.const 1))
              (then
                (if (i32.eqz (i32.and (local.get $mask)
                      (i32.load (i32.add (local.get $base)
                        (i32.shl (i32.wrap_i64 (i64.shr_u (local.get $ia) (i64.const 5))) (i32.const 2))))))
                  (then (local.set $r (i32.const 0)) (br $walked))))
              (else
                (i32.store (local.get $o) (i32.wrap_i64 (i64.shr_u (local.get $ia) (i64.const 5))))
                (i32.store (i32.add (local.get $o) (local.get $mo)) (local.get $mask))))
            (br_if $walked (i32.ge_u (i32.add (local.get $p) (i32.const 1)) (local.get $k)))
            (local.set $mask (i32.shl (i32.const 1) (i32.wrap_i64 (local.get $ib))))
            (if (i32.eq (local.get $mode) (i32.const 1))
              (then
                (if (i32.eqz (i32.and (local.get $mask)
                      (i32.load (i32.add (local.get $base)
                        (i32.shl (i32.wrap_i64 (i64.shr_u (local.get $ib) (i64.const 5))) (i32.const 2))))))
                  (then (local.set $r (i32.const 0)) (br $walked))))
              (else
                (i32.store offset=4 (local.get $o) (i32.wrap_i64 (i64.shr_u (local.get $ib) (i64.const 5))))
                (i32.store offset=4 (i32.add (local.get $o) (local.get $mo)) (local.get $mask))))
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
            (local.set $p (i32.add (local.get $p) (i32.const 2)))
            (br $probes)))
        (if (i32.eq (local.get $mode) (i32.const 1))
          (then
            (i32.store8 (i32.add (local.get $out) (local.get $i)) (local.get $r))
            (local.set $sum (i32.add (local.get $sum) (local.get $r)))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (if (i32.and (i32.ge_u (local.get $mode) (i32.const 2))
              (i32.or (i32.eq (local.get $j) (local.get $group)) (i32.eq (local.get $i) (local.get $count))))
          (then
            ;; The group's j keys are walked: load every probed word (the value is kept at [8, 12)
            ;; so the loads stay), then test or set key by key from key `first` on.
            (local.set $first (i32.sub (local.get $i) (local.get $j)))
            (local.set $q (i32.const 32768))
            (local.set $end (i32.add (i32.const 32768) (i32.mul (local.get $j) (local.get $per))))
            (loop $touch
              (local.set $p (i32.const 0))
              (loop $word
                (local.set $t
                  (i32.or (local.get $t)
                    (i32.load (i32.add (local.get $base)
                      (i32.shl (i32.load (i32.add (local.get $q) (i32.shl (local.get $p) (i32.const 2))))
                        (i32.const 2))))))
                (local.set $p (i32.add (local.get $p) (i32.const 1)))
                (br_if $word (i32.lt_u (local.get $p) (local.get $k))))
              (local.set $q (i32.add (local.get $q) (local.get $per)))
              (br_if $touch (i32.lt_u (local.get $q) (local.get $end))))
            (local.set $q (i32.const 32768))
            (loop $group_keys
              (local.set $r (i32.eq (local.get $mode) (i32.const 3)))
              (local.set $p (i32.const 0))
              (loop $bits
                (local.set $addr (i32.add (local.get $base)
                  (i32.shl (i32.load (i32.add (local.get $q) (i32.shl (local.get $p) (i32.const 2))))
                    (i32.const 2))))
                (local.set $mask
                  (i32.load (i32.add (local.get $q) (i32.shl (i32.add (local.get $p) (local.get $k)) (i32.const 2)))))
                (local.set $old (i32.load (local.get $addr)))
                (if (i32.eq (local.get $mode) (i32.const 3))
                  (then
                    ;; Test: key's byte is 1 if all its bits are set (branch-free).
                    (local.set $r
                      (i32.and (local.get $r) (i32.ne (i32.and (local.get $old) (local.get $mask)) (i32.const 0)))))
                  (else
                    ;; Set: key's byte counts the bits it set.
                    (i32.store (local.get $addr) (i32.or (local.get $old) (local.get $mask)))
                    (local.set $r (i32.add (local.get $r) (i32.eqz (i32.and (local.get $old) (local.get $mask)))))))
                (local.set $p (i32.add (local.get $p) (i32.const 1)))
                (br_if $bits (i32.lt_u (local.get $p) (local.get $k))))
              (i32.store8 (i32.add (local.get $out) (local.get $first)) (local.get $r))
              (local.set $sum (i32.add (local.get $sum) (local.get $r)))
              (local.set $first (i32.add (local.get $first) (i32.const 1)))
              (local.set $q (i32.add (local.get $q) (local.get $per)))
              (br_if $group_keys (i32.lt_u (local.get $q) (local.get $end))))
            (local.set $j (i32.const 0))
            (i32.store (i32.const 8) (local.get $t))))
        (br $keys_loop)))
    (local.get $sum)))
