;; XXH64 (Yann Collet, BSD-2-Clause; doc/xxhash_spec.md) in WebAssembly, for bloomkit's hot path.
;; Memory layout (all offsets in bytes):
;;   [0, 8)         the hash of the last `xxh64` call, u64 LE (read from JS as two i32 halves)
;;   [8, 16)        reserved
;;   [16, 4096)     `xxh64Many`: the length (i32) of each key of a batch, at most 1020 keys
;;   [4096, 12256)  `xxh64Many`: the hash (u64 LE) of each key of the batch
;;   [12288, ...)   key bytes written by JavaScript: one key, or a batch with each key starting
;;                  at a multiple of 4 bytes
;; Build: npm run build:wasm (compiles this file with wabt into xxhash64-wasm.ts).
(module
  (memory (export "memory") 1)
  (func $round (param $acc i64) (param $lane i64) (result i64)
    (i64.mul
      (i64.rotl
        (i64.add (local.get $acc) (i64.mul (local.get $lane) (i64.const 0xC2B2AE3D27D4EB4F)))
        (i64.const 31))
      (i64.const 0x9E3779B185EBCA87)))
  (func $merge (param $acc i64) (param $v i64) (result i64)
    (i64.add
      (i64.mul
        (i64.xor (local.get $acc) (call $round (i64.const 0) (local.get $v)))
        (i64.const 0x9E3779B185EBCA87))
      (i64.const 0x85EBCA77C2B2AE63)))
  ;; XXH64 of the `len` bytes at `p` with the 64-bit seed (seedHi:seedLo); the result goes to
  ;; [0, 8). One function with no calls inside, so that the per-key path makes one wasm call.
  (func $xxh64 (export "xxh64") (param $p i32) (param $len i32) (param $seedLo i32) (param $seedHi i32)
    (local $seed i64) (local $h i64) (local $v1 i64) (local $v2 i64) (local $v3 i64) (local $v4 i64)
    (local $end i32) (local $limit i32)
    (local.set $seed
      (i64.or
        (i64.extend_i32_u (local.get $seedLo))
        (i64.shl (i64.extend_i32_u (local.get $seedHi)) (i64.const 32))))
    (local.set $end (i32.add (local.get $p) (local.get $len)))
    (if (i32.ge_u (local.get $len) (i32.const 32))
      (then
        (local.set $v1 (i64.add (local.get $seed) (i64.const 0x60EA27EEADC0B5D6)))
        (local.set $v2 (i64.add (local.get $seed) (i64.const 0xC2B2AE3D27D4EB4F)))
        (local.set $v3 (local.get $seed))
        (local.set $v4 (i64.sub (local.get $seed) (i64.const 0x9E3779B185EBCA87)))
        (local.set $limit (i32.sub (local.get $end) (i32.const 32)))
        (loop $stripes
          (local.set $v1
            (i64.mul
            (i64.rotl
              (i64.add (local.get $v1) (i64.mul (i64.load (local.get $p)) (i64.const 0xC2B2AE3D27D4EB4F)))
              (i64.const 31))
            (i64.const 0x9E3779B185EBCA87)))
          (local.set $v2
            (i64.mul
            (i64.rotl
              (i64.add (local.get $v2) (i64.mul (i64.load offset=8 (local.get $p)) (i64.const 0xC2B2AE3D27D4EB4F)))
              (i64.const 31))
            (i64.const 0x9E3779B185EBCA87)))
          (local.set $v3
            (i64.mul
            (i64.rotl
              (i64.add (local.get $v3) (i64.mul (i64.load offset=16 (local.get $p)) (i64.const 0xC2B2AE3D27D4EB4F)))
              (i64.const 31))
            (i64.const 0x9E3779B185EBCA87)))
          (local.set $v4
            (i64.mul
            (i64.rotl
              (i64.add (local.get $v4) (i64.mul (i64.load offset=24 (local.get $p)) (i64.const 0xC2B2AE3D27D4EB4F)))
              (i64.const 31))
            (i64.const 0x9E3779B185EBCA87)))
          (local.set $p (i32.add (local.get $p) (i32.const 32)))
          (br_if $stripes (i32.le_u (local.get $p) (local.get $limit))))
        (local.set $h
          (i64.add
            (i64.add (i64.rotl (local.get $v1) (i64.const 1)) (i64.rotl (local.get $v2) (i64.const 7)))
            (i64.add (i64.rotl (local.get $v3) (i64.const 12)) (i64.rotl (local.get $v4) (i64.const 18)))))
        (local.set $h (call $merge (local.get $h) (local.get $v1)))
        (local.set $h (call $merge (local.get $h) (local.get $v2)))
        (local.set $h (call $merge (local.get $h) (local.get $v3)))
        (local.set $h (call $merge (local.get $h) (local.get $v4))))
      (else
        (local.set $h (i64.add (local.get $seed) (i64.const 0x27D4EB2F165667C5)))))
    (local.set $h (i64.add (local.get $h) (i64.extend_i32_u (local.get $len))))
    (block $done8
      (loop $lanes
        (br_if $done8 (i32.gt_u (i32.add (local.get $p) (i32.const 8)) (local.get $end)))
        ;; round(0, lane) inlined: V8 does not inline wasm-to-wasm calls, and a call per 8 bytes
        ;; costs more than the round itself.
        (local.set $h
          (i64.xor (local.get $h)
            (i64.mul
              (i64.rotl (i64.mul (i64.load (local.get $p)) (i64.const 0xC2B2AE3D27D4EB4F)) (i64.const 31))
              (i64.const 0x9E3779B185EBCA87))))
        (local.set $h
          (i64.add
            (i64.mul (i64.rotl (local.get $h) (i64.const 27)) (i64.const 0x9E3779B185EBCA87))
            (i64.const 0x85EBCA77C2B2AE63)))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (br $lanes)))
    (if (i32.le_u (i32.add (local.get $p) (i32.const 4)) (local.get $end))
      (then
        (local.set $h
          (i64.xor (local.get $h)
            (i64.mul (i64.load32_u (local.get $p)) (i64.const 0x9E3779B185EBCA87))))
        (local.set $h
          (i64.add
            (i64.mul (i64.rotl (local.get $h) (i64.const 23)) (i64.const 0xC2B2AE3D27D4EB4F))
            (i64.const 0x165667B19E3779F9)))
        (local.set $p (i32.add (local.get $p) (i32.const 4)))))
    (block $done1
      (loop $bytes
        (br_if $done1 (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $h
          (i64.xor (local.get $h)
            (i64.mul (i64.load8_u (local.get $p)) (i64.const 0x27D4EB2F165667C5))))
        (local.set $h
          (i64.mul (i64.rotl (local.get $h) (i64.const 11)) (i64.const 0x9E3779B185EBCA87)))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $bytes)))
    (local.set $h (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 33))))
    (local.set $h (i64.mul (local.get $h) (i64.const 0xC2B2AE3D27D4EB4F)))
    (local.set $h (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 29))))
    (local.set $h (i64.mul (local.get $h) (i64.const 0x165667B19E3779F9)))
    (i64.store (i32.const 0) (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 32)))))
  ;; Hashes `count` keys (seed 0) stored from 12288 on, each at the next multiple of 4 bytes,
  ;; whose lengths are the i32s at 16; hash i goes to 4096 + 8i.
  (func (export "xxh64Many") (param $count i32)
    (local $i i32) (local $p i32) (local $len i32)
    (local.set $p (i32.const 12288))
    (block $done
      (loop $keys
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $len (i32.load offset=16 (i32.shl (local.get $i) (i32.const 2))))
        (call $xxh64 (local.get $p) (local.get $len) (i32.const 0) (i32.const 0))
        (i64.store offset=4096 (i32.shl (local.get $i) (i32.const 3)) (i64.load (i32.const 0)))
        (local.set $p
          (i32.and (i32.add (i32.add (local.get $p) (local.get $len)) (i32.const 3)) (i32.const -4)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $keys)))))
