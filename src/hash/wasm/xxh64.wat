;; bloomkit's XXH64 kernels (Yann Collet, BSD-2-Clause; doc/xxhash_spec.md), per key and over a
;; packed batch of keys: the hash behind the blocked and split-block filters. MurmurHash3 is a
;; module of its own (murmur3.wat), so that a bundle hashing with one never carries the other.
;;
;; The memory is imported: it is the process-wide scratch that this module shares with
;; murmur3.wat (hash/scratch.ts makes it; murmur3.wat gives the whole layout). Used here:
;;   [0, 8)           xxh64: the last per-key hash (u64 LE); the key's offset and end on the way in
;;   [4096, 8196)     a batch chunk's key offsets (u32), written by JS
;;   [9728, 13828)    a chunk's key ends, when they are not the next key's offset (u32)
;;   [14336, 22528)   xxh64_batch: a chunk's hashes, 8 bytes per key
;;   [32768, ...)     key bytes written by JavaScript: one key, or a chunk of packed keys
;; Batch keys: key i of a chunk is the bytes [$keys + off[i], $keys + end[i]) (i32 arithmetic),
;; off[] and end[] being the u32s at $offs and $ends. Every hash here has seed 0 (the filters'),
;; so the seed's terms are constants.
;; Build: npm run build:wasm (compiles this file with wabt into xxh64-wasm.ts).
(module
  (import "env" "memory" (memory 2))
  ;; XXH64 (seed 0) of the `len` bytes at `p` into [0, 8): a batch of one key whose offset (0) and
  ;; end (`len`) are written to [0, 8) first; the batch reads them before it writes the hash there.
  (func (export "xxh64") (param $p i32) (param $len i32)
    (i64.store (i32.const 0) (i64.shl (i64.extend_i32_u (local.get $len)) (i64.const 32)))
    (call $xxh64_batch (local.get $p) (i32.const 0) (i32.const 4) (i32.const 1) (i32.const 0)))
  ;; XXH64 (seed 0) of the `count` keys of a chunk; key i's hash goes to `out` + 8i. The hash,
  ;; its four lane merges included, is written out inside the loop: V8 does not inline
  ;; wasm-to-wasm calls, and a call per key and four per key of 32 bytes or more cost 1.2 to 1.25x
  ;; the time of a packed blocked-filter batch at 1M URL keys.
  (func $xxh64_batch (export "xxh64_batch") (param $keys i32) (param $offs i32) (param $ends i32)
    (param $count i32) (param $out i32)
    (local $i i32) (local $a i32) (local $q i32) (local $p i32) (local $len i32)
    (local $h i64) (local $v1 i64) (local $v2 i64) (local $v3 i64) (local $v4 i64)
    (local $end i32) (local $limit i32)
    (block $done
      (loop $keys_loop
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        (local.set $q (i32.shl (local.get $i) (i32.const 2)))
        (local.set $a (i32.load (i32.add (local.get $offs) (local.get $q))))
        (local.set $p (i32.add (local.get $keys) (local.get $a)))
        (local.set $len (i32.sub (i32.load (i32.add (local.get $ends) (local.get $q))) (local.get $a)))
    (local.set $end (i32.add (local.get $p) (local.get $len)))
        (if (i32.ge_u (local.get $len) (i32.const 32))
          (then
            (local.set $v1 (i64.const 0x60EA27EEADC0B5D6))
            (local.set $v2 (i64.const 0xC2B2AE3D27D4EB4F))
            (local.set $v3 (i64.const 0))
            (local.set $v4 (i64.const 0x61C8864E7A143579))
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
            (local.set $h (i64.add
              (i64.mul
                (i64.xor (local.get $h)
                  (i64.mul
                    (i64.rotl (i64.mul (local.get $v1) (i64.const 0xC2B2AE3D27D4EB4F)) (i64.const 31))
                    (i64.const 0x9E3779B185EBCA87)))
                (i64.const 0x9E3779B185EBCA87))
              (i64.const 0x85EBCA77C2B2AE63)))
            (local.set $h (i64.add
              (i64.mul
                (i64.xor (local.get $h)
                  (i64.mul
                    (i64.rotl (i64.mul (local.get $v2) (i64.const 0xC2B2AE3D27D4EB4F)) (i64.const 31))
                    (i64.const 0x9E3779B185EBCA87)))
                (i64.const 0x9E3779B185EBCA87))
              (i64.const 0x85EBCA77C2B2AE63)))
            (local.set $h (i64.add
              (i64.mul
                (i64.xor (local.get $h)
                  (i64.mul
                    (i64.rotl (i64.mul (local.get $v3) (i64.const 0xC2B2AE3D27D4EB4F)) (i64.const 31))
                    (i64.const 0x9E3779B185EBCA87)))
                (i64.const 0x9E3779B185EBCA87))
              (i64.const 0x85EBCA77C2B2AE63)))
            (local.set $h (i64.add
              (i64.mul
                (i64.xor (local.get $h)
                  (i64.mul
                    (i64.rotl (i64.mul (local.get $v4) (i64.const 0xC2B2AE3D27D4EB4F)) (i64.const 31))
                    (i64.const 0x9E3779B185EBCA87)))
                (i64.const 0x9E3779B185EBCA87))
              (i64.const 0x85EBCA77C2B2AE63))))
          (else
            (local.set $h (i64.const 0x27D4EB2F165667C5))))
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
        (i64.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 3)))
          (i64.xor (local.get $h) (i64.shr_u (local.get $h) (i64.const 32))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $keys_loop)))))
