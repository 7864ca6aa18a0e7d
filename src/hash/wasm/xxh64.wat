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
  ;; XXH64 (seed 0) of the `count` keys of a chunk; key i's hash goes to `out` + 8i. One key's
  ;; XXH64 is a chain of dependent 64-bit multiplies (the lane merge, the tail, the avalanche),
  ;; and with keys of varied lengths the branches of the tail (0 to 3 lanes of 8 bytes, a 4-byte
  ;; lane, 0 to 3 bytes) are mispredicted, each flush restarting the chain. So the keys go two at a
  ;; time (keys i and i + 1; the last key of an odd count with itself, its hash stored twice in
  ;; one place): each key's stripe loop and lane merge (the merge's chain then runs while the next
  ;; key's loop resolves its exit), then both tails side by side without a branch: every step is
  ;; computed and kept with a `select` when the key has it, from address 0 when it does not (no
  ;; read past the key), and both avalanches. The same hash bit for bit. The primes are locals set
  ;; once (TurboFan sees the constants: the same machine code), which keeps the module at 1,604
  ;; bytes against 2,394 with each written out.
  ;; Measured (hashing alone, 1M keys, Node 20, CPU time): real-looking URLs (20 to 200 bytes)
  ;; 22.0 ns a key against 31.4 with a branchy tail key by key, 23.7 with the branchless tail key by
  ;; key, and 37.6 with both keys' loops side by side (stripes, lanes and bytes while both have
  ;; one: the eight lane accumulators spill and every loop exit still mispredicts); 26 to 32-byte
  ;; keys, whose branches predict well, 9.0 against 7.9. Both keys' stripes side by side (then the
  ;; longer key's alone) with these tails: 24.2 against 21.2 in another run. In the blocked
  ;; filter's batch (bench/kernels.ts, URL keys): 1.14 to 1.16x as fast at 3M keys, 1.18 to 1.19x
  ;; at 10M (49 against 57 ns a key for adds). One key alone (`xxh64`, the per-key paths) pays
  ;; for it: every tail step is in its chain and no other key's work overlaps it, 91 against 85
  ;; ns a URL key with its copy into memory. The hash, its four lane merges included, is
  ;; written out inside the loop: V8 does not inline wasm-to-wasm calls, and a call per key and
  ;; four per key of 32 bytes or more cost 1.2 to 1.25x the time of a packed blocked-filter batch
  ;; at 1M URL keys.
  (func $xxh64_batch (export "xxh64_batch") (param $keys i32) (param $offs i32) (param $ends i32)
    (param $count i32) (param $out i32)
    (local $i i32) (local $j i32) (local $e i32) (local $pa i32) (local $pb i32) (local $la i32)
    (local $lb i32) (local $ha i64) (local $hb i64)
    (local $a1 i64) (local $a2 i64) (local $a3 i64) (local $a4 i64)
    (local $b1 i64) (local $b2 i64) (local $b3 i64) (local $b4 i64)
    (local $P1 i64) (local $P2 i64) (local $P3 i64) (local $P4 i64) (local $P5 i64) (local $V1 i64)
    (local $V4 i64)
    (local.set $P1 (i64.const 0x9E3779B185EBCA87))
    (local.set $P2 (i64.const 0xC2B2AE3D27D4EB4F))
    (local.set $P3 (i64.const 0x165667B19E3779F9))
    (local.set $P4 (i64.const 0x85EBCA77C2B2AE63))
    (local.set $P5 (i64.const 0x27D4EB2F165667C5))
    (local.set $V1 (i64.const 0x60EA27EEADC0B5D6))
    (local.set $V4 (i64.const 0x61C8864E7A143579))
    (block $done
      (loop $pairs
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        ;; Keys i (A) and j (B): j = i + 1, or i itself when i is the last key.
        (local.set $j (i32.add (local.get $i) (i32.const 1)))
        (local.set $j (select (local.get $j) (local.get $i) (i32.lt_u (local.get $j) (local.get $count))))
        (local.set $e (i32.load (i32.add (local.get $offs) (i32.shl (local.get $i) (i32.const 2)))))
        (local.set $pa (i32.add (local.get $keys) (local.get $e)))
        (local.set $la
          (i32.sub (i32.load (i32.add (local.get $ends) (i32.shl (local.get $i) (i32.const 2)))) (local.get $e)))
        (local.set $e (i32.load (i32.add (local.get $offs) (i32.shl (local.get $j) (i32.const 2)))))
        (local.set $pb (i32.add (local.get $keys) (local.get $e)))
        (local.set $lb
          (i32.sub (i32.load (i32.add (local.get $ends) (i32.shl (local.get $j) (i32.const 2)))) (local.get $e)))
        ;; Key A: its 32-byte stripes and their lane merge, or PRIME5 when shorter.
        (if (i32.ge_u (local.get $la) (i32.const 32))
          (then
            (local.set $a1 (local.get $V1))
            (local.set $a2 (local.get $P2))
            (local.set $a3 (i64.const 0))
            (local.set $a4 (local.get $V4))
            (local.set $e (i32.sub (i32.add (local.get $pa) (local.get $la)) (i32.const 32)))
            (loop $stripes_a
              (local.set $a1
                (i64.mul (i64.rotl (i64.add (local.get $a1) (i64.mul (i64.load (local.get $pa)) (local.get $P2)))
                  (i64.const 31)) (local.get $P1)))
              (local.set $a2
                (i64.mul (i64.rotl (i64.add (local.get $a2) (i64.mul (i64.load offset=8 (local.get $pa)) (local.get $P2)))
                  (i64.const 31)) (local.get $P1)))
              (local.set $a3
                (i64.mul (i64.rotl (i64.add (local.get $a3) (i64.mul (i64.load offset=16 (local.get $pa)) (local.get $P2)))
                  (i64.const 31)) (local.get $P1)))
              (local.set $a4
                (i64.mul (i64.rotl (i64.add (local.get $a4) (i64.mul (i64.load offset=24 (local.get $pa)) (local.get $P2)))
                  (i64.const 31)) (local.get $P1)))
              (local.set $pa (i32.add (local.get $pa) (i32.const 32)))
              (br_if $stripes_a (i32.le_u (local.get $pa) (local.get $e))))
            (local.set $ha (i64.add
              (i64.add (i64.rotl (local.get $a1) (i64.const 1)) (i64.rotl (local.get $a2) (i64.const 7)))
              (i64.add (i64.rotl (local.get $a3) (i64.const 12)) (i64.rotl (local.get $a4) (i64.const 18)))))
            (local.set $ha (i64.add (i64.mul (i64.xor (local.get $ha)
              (i64.mul (i64.rotl (i64.mul (local.get $a1) (local.get $P2)) (i64.const 31)) (local.get $P1)))
              (local.get $P1)) (local.get $P4)))
            (local.set $ha (i64.add (i64.mul (i64.xor (local.get $ha)
              (i64.mul (i64.rotl (i64.mul (local.get $a2) (local.get $P2)) (i64.const 31)) (local.get $P1)))
              (local.get $P1)) (local.get $P4)))
            (local.set $ha (i64.add (i64.mul (i64.xor (local.get $ha)
              (i64.mul (i64.rotl (i64.mul (local.get $a3) (local.get $P2)) (i64.const 31)) (local.get $P1)))
              (local.get $P1)) (local.get $P4)))
            (local.set $ha (i64.add (i64.mul (i64.xor (local.get $ha)
              (i64.mul (i64.rotl (i64.mul (local.get $a4) (local.get $P2)) (i64.const 31)) (local.get $P1)))
              (local.get $P1)) (local.get $P4))))
          (else (local.set $ha (local.get $P5))))
        (local.set $ha (i64.add (local.get $ha) (i64.extend_i32_u (local.get $la))))
        ;; Key B: its 32-byte stripes and their lane merge, or PRIME5 when shorter.
        (if (i32.ge_u (local.get $lb) (i32.const 32))
          (then
            (local.set $b1 (local.get $V1))
            (local.set $b2 (local.get $P2))
            (local.set $b3 (i64.const 0))
            (local.set $b4 (local.get $V4))
            (local.set $e (i32.sub (i32.add (local.get $pb) (local.get $lb)) (i32.const 32)))
            (loop $stripes_b
              (local.set $b1
                (i64.mul (i64.rotl (i64.add (local.get $b1) (i64.mul (i64.load (local.get $pb)) (local.get $P2)))
                  (i64.const 31)) (local.get $P1)))
              (local.set $b2
                (i64.mul (i64.rotl (i64.add (local.get $b2) (i64.mul (i64.load offset=8 (local.get $pb)) (local.get $P2)))
                  (i64.const 31)) (local.get $P1)))
              (local.set $b3
                (i64.mul (i64.rotl (i64.add (local.get $b3) (i64.mul (i64.load offset=16 (local.get $pb)) (local.get $P2)))
                  (i64.const 31)) (local.get $P1)))
              (local.set $b4
                (i64.mul (i64.rotl (i64.add (local.get $b4) (i64.mul (i64.load offset=24 (local.get $pb)) (local.get $P2)))
                  (i64.const 31)) (local.get $P1)))
              (local.set $pb (i32.add (local.get $pb) (i32.const 32)))
              (br_if $stripes_b (i32.le_u (local.get $pb) (local.get $e))))
            (local.set $hb (i64.add
              (i64.add (i64.rotl (local.get $b1) (i64.const 1)) (i64.rotl (local.get $b2) (i64.const 7)))
              (i64.add (i64.rotl (local.get $b3) (i64.const 12)) (i64.rotl (local.get $b4) (i64.const 18)))))
            (local.set $hb (i64.add (i64.mul (i64.xor (local.get $hb)
              (i64.mul (i64.rotl (i64.mul (local.get $b1) (local.get $P2)) (i64.const 31)) (local.get $P1)))
              (local.get $P1)) (local.get $P4)))
            (local.set $hb (i64.add (i64.mul (i64.xor (local.get $hb)
              (i64.mul (i64.rotl (i64.mul (local.get $b2) (local.get $P2)) (i64.const 31)) (local.get $P1)))
              (local.get $P1)) (local.get $P4)))
            (local.set $hb (i64.add (i64.mul (i64.xor (local.get $hb)
              (i64.mul (i64.rotl (i64.mul (local.get $b3) (local.get $P2)) (i64.const 31)) (local.get $P1)))
              (local.get $P1)) (local.get $P4)))
            (local.set $hb (i64.add (i64.mul (i64.xor (local.get $hb)
              (i64.mul (i64.rotl (i64.mul (local.get $b4) (local.get $P2)) (i64.const 31)) (local.get $P1)))
              (local.get $P1)) (local.get $P4))))
          (else (local.set $hb (local.get $P5))))
        (local.set $hb (i64.add (local.get $hb) (i64.extend_i32_u (local.get $lb))))
        ;; The tails of both, without branches: ((len & 31) >>> 3) 8-byte lanes, a 4-byte lane when
        ;; len & 4, (len & 3) single bytes; a step a key does not take reads address 0 and is dropped.
        (local.set $ha (select (i64.add (i64.mul (i64.rotl (i64.xor (local.get $ha)
          (i64.mul (i64.rotl (i64.mul (i64.load (select (i32.add (local.get $pa) (i32.const 0)) (i32.const 0) (i32.gt_u (i32.and (local.get $la) (i32.const 24)) (i32.const 0)))) (local.get $P2)) (i64.const 31)) (local.get $P1)))
          (i64.const 27)) (local.get $P1)) (local.get $P4)) (local.get $ha) (i32.gt_u (i32.and (local.get $la) (i32.const 24)) (i32.const 0))))
        (local.set $hb (select (i64.add (i64.mul (i64.rotl (i64.xor (local.get $hb)
          (i64.mul (i64.rotl (i64.mul (i64.load (select (i32.add (local.get $pb) (i32.const 0)) (i32.const 0) (i32.gt_u (i32.and (local.get $lb) (i32.const 24)) (i32.const 0)))) (local.get $P2)) (i64.const 31)) (local.get $P1)))
          (i64.const 27)) (local.get $P1)) (local.get $P4)) (local.get $hb) (i32.gt_u (i32.and (local.get $lb) (i32.const 24)) (i32.const 0))))
        (local.set $ha (select (i64.add (i64.mul (i64.rotl (i64.xor (local.get $ha)
          (i64.mul (i64.rotl (i64.mul (i64.load (select (i32.add (local.get $pa) (i32.const 8)) (i32.const 0) (i32.gt_u (i32.and (local.get $la) (i32.const 24)) (i32.const 8)))) (local.get $P2)) (i64.const 31)) (local.get $P1)))
          (i64.const 27)) (local.get $P1)) (local.get $P4)) (local.get $ha) (i32.gt_u (i32.and (local.get $la) (i32.const 24)) (i32.const 8))))
        (local.set $hb (select (i64.add (i64.mul (i64.rotl (i64.xor (local.get $hb)
          (i64.mul (i64.rotl (i64.mul (i64.load (select (i32.add (local.get $pb) (i32.const 8)) (i32.const 0) (i32.gt_u (i32.and (local.get $lb) (i32.const 24)) (i32.const 8)))) (local.get $P2)) (i64.const 31)) (local.get $P1)))
          (i64.const 27)) (local.get $P1)) (local.get $P4)) (local.get $hb) (i32.gt_u (i32.and (local.get $lb) (i32.const 24)) (i32.const 8))))
        (local.set $ha (select (i64.add (i64.mul (i64.rotl (i64.xor (local.get $ha)
          (i64.mul (i64.rotl (i64.mul (i64.load (select (i32.add (local.get $pa) (i32.const 16)) (i32.const 0) (i32.gt_u (i32.and (local.get $la) (i32.const 24)) (i32.const 16)))) (local.get $P2)) (i64.const 31)) (local.get $P1)))
          (i64.const 27)) (local.get $P1)) (local.get $P4)) (local.get $ha) (i32.gt_u (i32.and (local.get $la) (i32.const 24)) (i32.const 16))))
        (local.set $hb (select (i64.add (i64.mul (i64.rotl (i64.xor (local.get $hb)
          (i64.mul (i64.rotl (i64.mul (i64.load (select (i32.add (local.get $pb) (i32.const 16)) (i32.const 0) (i32.gt_u (i32.and (local.get $lb) (i32.const 24)) (i32.const 16)))) (local.get $P2)) (i64.const 31)) (local.get $P1)))
          (i64.const 27)) (local.get $P1)) (local.get $P4)) (local.get $hb) (i32.gt_u (i32.and (local.get $lb) (i32.const 24)) (i32.const 16))))
        (local.set $pa (i32.add (local.get $pa) (i32.and (local.get $la) (i32.const 24))))
        (local.set $pb (i32.add (local.get $pb) (i32.and (local.get $lb) (i32.const 24))))
        (local.set $ha (select (i64.add (i64.mul (i64.rotl (i64.xor (local.get $ha)
          (i64.mul (i64.load32_u (select (local.get $pa) (i32.const 0) (i32.and (local.get $la) (i32.const 4)))) (local.get $P1)))
          (i64.const 23)) (local.get $P2)) (local.get $P3)) (local.get $ha) (i32.and (local.get $la) (i32.const 4))))
        (local.set $hb (select (i64.add (i64.mul (i64.rotl (i64.xor (local.get $hb)
          (i64.mul (i64.load32_u (select (local.get $pb) (i32.const 0) (i32.and (local.get $lb) (i32.const 4)))) (local.get $P1)))
          (i64.const 23)) (local.get $P2)) (local.get $P3)) (local.get $hb) (i32.and (local.get $lb) (i32.const 4))))
        (local.set $pa (i32.add (local.get $pa) (i32.and (local.get $la) (i32.const 4))))
        (local.set $pb (i32.add (local.get $pb) (i32.and (local.get $lb) (i32.const 4))))
        (local.set $ha (select (i64.mul (i64.rotl (i64.xor (local.get $ha)
          (i64.mul (i64.load8_u (select (i32.add (local.get $pa) (i32.const 0)) (i32.const 0) (i32.gt_u (i32.and (local.get $la) (i32.const 3)) (i32.const 0)))) (local.get $P5)))
          (i64.const 11)) (local.get $P1)) (local.get $ha) (i32.gt_u (i32.and (local.get $la) (i32.const 3)) (i32.const 0))))
        (local.set $hb (select (i64.mul (i64.rotl (i64.xor (local.get $hb)
          (i64.mul (i64.load8_u (select (i32.add (local.get $pb) (i32.const 0)) (i32.const 0) (i32.gt_u (i32.and (local.get $lb) (i32.const 3)) (i32.const 0)))) (local.get $P5)))
          (i64.const 11)) (local.get $P1)) (local.get $hb) (i32.gt_u (i32.and (local.get $lb) (i32.const 3)) (i32.const 0))))
        (local.set $ha (select (i64.mul (i64.rotl (i64.xor (local.get $ha)
          (i64.mul (i64.load8_u (select (i32.add (local.get $pa) (i32.const 1)) (i32.const 0) (i32.gt_u (i32.and (local.get $la) (i32.const 3)) (i32.const 1)))) (local.get $P5)))
          (i64.const 11)) (local.get $P1)) (local.get $ha) (i32.gt_u (i32.and (local.get $la) (i32.const 3)) (i32.const 1))))
        (local.set $hb (select (i64.mul (i64.rotl (i64.xor (local.get $hb)
          (i64.mul (i64.load8_u (select (i32.add (local.get $pb) (i32.const 1)) (i32.const 0) (i32.gt_u (i32.and (local.get $lb) (i32.const 3)) (i32.const 1)))) (local.get $P5)))
          (i64.const 11)) (local.get $P1)) (local.get $hb) (i32.gt_u (i32.and (local.get $lb) (i32.const 3)) (i32.const 1))))
        (local.set $ha (select (i64.mul (i64.rotl (i64.xor (local.get $ha)
          (i64.mul (i64.load8_u (select (i32.add (local.get $pa) (i32.const 2)) (i32.const 0) (i32.gt_u (i32.and (local.get $la) (i32.const 3)) (i32.const 2)))) (local.get $P5)))
          (i64.const 11)) (local.get $P1)) (local.get $ha) (i32.gt_u (i32.and (local.get $la) (i32.const 3)) (i32.const 2))))
        (local.set $hb (select (i64.mul (i64.rotl (i64.xor (local.get $hb)
          (i64.mul (i64.load8_u (select (i32.add (local.get $pb) (i32.const 2)) (i32.const 0) (i32.gt_u (i32.and (local.get $lb) (i32.const 3)) (i32.const 2)))) (local.get $P5)))
          (i64.const 11)) (local.get $P1)) (local.get $hb) (i32.gt_u (i32.and (local.get $lb) (i32.const 3)) (i32.const 2))))
        ;; The avalanche; B's hash is stored first, so that A's is the one kept when B is A.
        (local.set $ha (i64.mul (i64.xor (local.get $ha) (i64.shr_u (local.get $ha) (i64.const 33))) (local.get $P2)))
        (local.set $ha (i64.mul (i64.xor (local.get $ha) (i64.shr_u (local.get $ha) (i64.const 29))) (local.get $P3)))
        (local.set $hb (i64.mul (i64.xor (local.get $hb) (i64.shr_u (local.get $hb) (i64.const 33))) (local.get $P2)))
        (local.set $hb (i64.mul (i64.xor (local.get $hb) (i64.shr_u (local.get $hb) (i64.const 29))) (local.get $P3)))
        (i64.store (i32.add (local.get $out) (i32.shl (local.get $j) (i32.const 3)))
          (i64.xor (local.get $hb) (i64.shr_u (local.get $hb) (i64.const 32))))
        (i64.store (i32.add (local.get $out) (i32.shl (local.get $i) (i32.const 3)))
          (i64.xor (local.get $ha) (i64.shr_u (local.get $ha) (i64.const 32))))
        (local.set $i (i32.add (local.get $i) (i32.const 2)))
        (br $pairs)))))
