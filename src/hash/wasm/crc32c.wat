;; CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), slicing-by-8, for src/formats/crc32c-bulk.ts.
;; Memory (imported, at least 1 page): bytes [0, 8192) hold the 8 tables of 256 u32 that `init`
;; computes (table s at 1024·s: t0[n] is the CRC of byte n, t_s[n] = (t_{s-1}[n] >>> 8) ^
;; t0[t_{s-1}[n] & 0xff]); the caller copies the bytes to check after them.
;; crc(p, len, crc) continues the CRC `crc` (0 to start) over bytes [p, p + len): 8 bytes a step,
;; each step XORs the first 4 with the CRC and looks up all 8 in the 8 tables, as in the
;; JavaScript loop of src/formats/crc32c.ts (which computes the same values), then the last len mod 8 bytes
;; one by one.
(module
  (import "env" "memory" (memory 1))
  (func (export "init")
    (local $n i32) (local $c i32) (local $k i32)
    (loop $byte
      (local.set $c (local.get $n))
      (local.set $k (i32.const 8))
      (loop $bit
        (local.set $c
          (select
            (i32.xor (i32.shr_u (local.get $c) (i32.const 1)) (i32.const 0x82f63b78))
            (i32.shr_u (local.get $c) (i32.const 1))
            (i32.and (local.get $c) (i32.const 1))))
        (local.set $k (i32.sub (local.get $k) (i32.const 1)))
        (br_if $bit (local.get $k)))
      (i32.store (i32.shl (local.get $n) (i32.const 2)) (local.get $c))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br_if $byte (i32.lt_u (local.get $n) (i32.const 256))))
    (loop $slice
      (local.set $c (i32.load (i32.sub (i32.shl (local.get $n) (i32.const 2)) (i32.const 1024))))
      (i32.store
        (i32.shl (local.get $n) (i32.const 2))
        (i32.xor
          (i32.shr_u (local.get $c) (i32.const 8))
          (i32.load (i32.shl (i32.and (local.get $c) (i32.const 255)) (i32.const 2)))))
      (local.set $n (i32.add (local.get $n) (i32.const 1)))
      (br_if $slice (i32.lt_u (local.get $n) (i32.const 2048)))))
  (func (export "crc") (param $p i32) (param $len i32) (param $crc i32) (result i32)
    (local $c i32) (local $end i32) (local $end8 i32) (local $lo i32) (local $hi i32)
    (local.set $c (i32.xor (local.get $crc) (i32.const -1)))
    (local.set $end (i32.add (local.get $p) (local.get $len)))
    (local.set $end8 (i32.sub (local.get $end) (i32.and (local.get $len) (i32.const 7))))
    (block $done
      (loop $step
        (br_if $done (i32.ge_u (local.get $p) (local.get $end8)))
        (local.set $lo (i32.xor (local.get $c) (i32.load (local.get $p))))
        (local.set $hi (i32.load offset=4 (local.get $p)))
        (local.set $c
          (i32.xor
            (i32.xor
              (i32.xor
                (i32.load offset=7168 (i32.shl (i32.and (local.get $lo) (i32.const 255)) (i32.const 2)))
                (i32.load offset=6144
                  (i32.shl (i32.and (i32.shr_u (local.get $lo) (i32.const 8)) (i32.const 255)) (i32.const 2))))
              (i32.xor
                (i32.load offset=5120
                  (i32.shl (i32.and (i32.shr_u (local.get $lo) (i32.const 16)) (i32.const 255)) (i32.const 2)))
                (i32.load offset=4096 (i32.shl (i32.shr_u (local.get $lo) (i32.const 24)) (i32.const 2)))))
            (i32.xor
              (i32.xor
                (i32.load offset=3072 (i32.shl (i32.and (local.get $hi) (i32.const 255)) (i32.const 2)))
                (i32.load offset=2048
                  (i32.shl (i32.and (i32.shr_u (local.get $hi) (i32.const 8)) (i32.const 255)) (i32.const 2))))
              (i32.xor
                (i32.load offset=1024
                  (i32.shl (i32.and (i32.shr_u (local.get $hi) (i32.const 16)) (i32.const 255)) (i32.const 2)))
                (i32.load (i32.shl (i32.shr_u (local.get $hi) (i32.const 24)) (i32.const 2)))))))
        (local.set $p (i32.add (local.get $p) (i32.const 8)))
        (br $step)))
    (block $tail_done
      (loop $tail
        (br_if $tail_done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $c
          (i32.xor
            (i32.shr_u (local.get $c) (i32.const 8))
            (i32.load
              (i32.shl
                (i32.and (i32.xor (local.get $c) (i32.load8_u (local.get $p))) (i32.const 255))
                (i32.const 2)))))
        (local.set $p (i32.add (local.get $p) (i32.const 1)))
        (br $tail)))
    (i32.xor (local.get $c) (i32.const -1))))
