;; bloomkit's XXH64 kernels (Yann Collet, BSD-2-Clause; doc/xxhash_spec.md), per key and over a
;; packed batch of keys: the hash behind the blocked and split-block filters. MurmurHash3 is a
;; module of its own (murmur3.wat), so that a bundle hashing with one never carries the other.
;;
;; The memory is imported: it is the process-wide scratch that this module shares with
;; murmur3.wat (hash/scratch.ts makes it; murmur3.wat gives the whole layout). Used here:
;;   [0, 8)           xxh64: the last per-key hash (u64 LE)
;;   [4096, 8196)     a batch chunk's key offsets (u32), written by JS
;;   [9728, 13828)    a chunk's key ends, when they are not the next key's offset (u32)
;;   [14336, 22528)   xxh64_batch: a chunk's hashes, 8 bytes per key
;;   [32768, ...)     key bytes written by JavaScript: one key, or a chunk of packed keys
;; Batch keys: key i of a chunk is the bytes [$keys + off[i], $keys + end[i]) (i32 arithmetic),
;; off[] and end[] being the u32s at $offs and $ends.
;; Build: npm run build:wasm (compiles this file with wabt into xxh64-wasm.ts).
(module
  (import "env" "memory" (memory 2))
  ;; XXH64 of the `len` bytes at `p` with the 64-bit seed (seedHi:seedLo).
  (func $xxh64 (param $p i32) (param $len i32) (param $seedLo i32) (param $seedHi i32) (result i64)
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
    (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 32))))
  (func $merge (param $acc i64) (param $v i64) (result i64)
    (i64.add
      (i64.mul
        (i64.xor (local.get $acc)
          (i64.mul
            (i64.rotl (i64.mul (local.get $v) (i64.const 0xC2B2AE3D27D4EB4F)) (i64.const 31))
            (i64.const 0x9E3779B185EBCA87)))
        (i64.const 0x9E3779B185EBCA87))
      (i64.const 0x85EBCA77C2B2AE63)))
  ;; XXH64 of the `len` bytes at `p` with the 64-bit seed (seedHi:seedLo) into [0, 8).
  (func (export "xxh64") (param $p i32) (param $len i32) (param $seedLo i32) (param $seedHi i32)
    (i64.store (i32.const 0)
      (call $xxh64 (local.get $p) (local.get $len) (local.get $seedLo) (local.get $seedHi))))
  ;; XXH64 (seed 0) of the `count` keys of a chunk; key i's hash goes to `out` + 8i.
  (func (export "xxh64_batch") (param $keys i32) (param $offs i32) (param $ends i32) (param $count i32)
    (param $out i32)
    (local $i i32) (local $a i32) (local $b i32) (local $q i32)
    (block $done
      (loop $keys_loop
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $q (i32.shl (local.get $i) (i32.const 2)))
        (local.set $a (i32.load (i32.add (local.get $offs) (local.get $q))))
        (local.set $b (i32.load (i32.add (local.get $ends) (local.get $q))))
        (i64.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 3)))
          (call $xxh64 (i32.add (local.get $keys) (local.get $a)) (i32.sub (local.get $b) (local.get $a))
            (i32.const 0) (i32.const 0)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $keys_loop)))))
