;; Transcodes a run of JavaScript strings, copied into the memory as UTF-16LE code units (one
;; `Buffer#ucs2Write` of the joined strings: a straight copy, one call per chunk instead of one
;; per key), into their 'string' funnel bytes (hash/keys.ts): UTF-8, where a lone surrogate
;; becomes Java's `?` (0x3F) as `String.getBytes(UTF_8)` writes it (Buffer and TextEncoder write
;; U+FFFD, EF BF BD). A surrogate pair split between two keys is two lone surrogates, as it is
;; key by key.
;;
;; The run is one stream, not key by key: ASCII comes 32 units per step with WebAssembly SIMD
;; (one OR and one test of bits 7 to 15, then narrowed to 32 bytes and stored) with no regard to
;; where keys end, since an ASCII key's bytes are its units: the ends of the keys of an ASCII
;; stretch are written when it ends, each its unit end plus the stretch's (bytes - units). A step
;; that meets a unit >= 0x80 keeps the bytes before it, and units are encoded one by one (2, 3 or
;; 4 bytes, or `?`) up to the next ASCII unit, noting the keys that end on the way. Key by key,
;; branches on each key's length (steps, then a tail) were mispredicted on fresh keys: 28 ns a
;; URL against 10 when the same keys repeat (Node 20).
;;
;; The memory is imported: a filter kernel's, or hash/utf16-stage.ts's own.
;; Build: npm run build:wasm (compiles this file with wabt into utf16-wasm.ts).
(module
  (import "env" "memory" (memory 1))
  ;; Transcodes `$count` keys whose units lie back to back from address `$src`. `$offs` holds
  ;; `$count + 1` u32: entry 0 is the address the first key's bytes go to; entry j + 1 is the
  ;; unit index (from `$src`) where key j ends. Each entry j + 1 of a key done is replaced by the
  ;; address where key j's bytes end; returns how many keys were done.
  ;;
  ;; Reads no unit past the last and writes up to 32 bytes past the last byte (junk the caller
  ;; ignores). The output may lie before the input and run into it: before a key's first unit
  ;; that is not ASCII, that unit must lie at least (units left in the key + 32) bytes after
  ;; where the output has reached, else the keys done so far are returned. A unit adds at most 3
  ;; bytes of output and 2 of input, so that gap shrinks by at most 1 byte a unit and stays >= 32
  ;; within the key; ASCII only widens it, and no step (which writes at most 32 bytes of the 64
  ;; it read) reaches a unit not yet read. With the input after the output's worst case (3 bytes
  ;; a unit, then 32) every key is done.
  (func (export "utf8") (param $src i32) (param $offs i32) (param $count i32) (result i32)
    (local $o i32) (local $i i32) (local $e i32) (local $j i32) (local $n i32) (local $mask i32)
    (local $total i32) (local $p i32) (local $c i32) (local $d i32) (local $at i32)
    (local $a v128) (local $b v128) (local $c2 v128) (local $d2 v128) (local $top v128)
    (local $high v128)
    (if (i32.eqz (local.get $count)) (then (return (i32.const 0))))
    (local.set $top (i16x8.splat (i32.const 0x7f)))
    (local.set $high (i16x8.splat (i32.const 0xff80)))
    (local.set $o (i32.load (local.get $offs)))
    (local.set $total
      (i32.load (i32.add (local.get $offs) (i32.shl (local.get $count) (i32.const 2)))))
    (loop $stream
      ;; ASCII from unit i on: whole steps of 32 units, then (fewer than 32 left) unit by unit;
      ;; stops at the first unit >= 0x80 or at the end.
      (block $stretch_done
        (loop $steps
          (if (i32.gt_u (i32.add (local.get $i) (i32.const 32)) (local.get $total))
            (then
              (loop $tail
                (br_if $stretch_done (i32.ge_u (local.get $i) (local.get $total)))
                (local.set $c
                  (i32.load16_u (i32.add (local.get $src) (i32.shl (local.get $i) (i32.const 1)))))
                (br_if $stretch_done (i32.ge_u (local.get $c) (i32.const 0x80)))
                (i32.store8 (local.get $o) (local.get $c))
                (local.set $o (i32.add (local.get $o) (i32.const 1)))
                (local.set $i (i32.add (local.get $i) (i32.const 1)))
                (br $tail))))
          (local.set $p (i32.add (local.get $src) (i32.shl (local.get $i) (i32.const 1))))
          (local.set $a (v128.load (local.get $p)))
          (local.set $b (v128.load offset=16 (local.get $p)))
          (local.set $c2 (v128.load offset=32 (local.get $p)))
          (local.set $d2 (v128.load offset=48 (local.get $p)))
          (v128.store (local.get $o) (i8x16.narrow_i16x8_u (local.get $a) (local.get $b)))
          (v128.store offset=16 (local.get $o) (i8x16.narrow_i16x8_u (local.get $c2) (local.get $d2)))
          (if (i32.eqz
                (v128.any_true
                  (v128.and (local.get $high)
                    (v128.or
                      (v128.or (local.get $a) (local.get $b))
                      (v128.or (local.get $c2) (local.get $d2))))))
            (then
              (local.set $o (i32.add (local.get $o) (i32.const 32)))
              (local.set $i (i32.add (local.get $i) (i32.const 32)))
              (br $steps)))
          ;; Keep the ASCII bytes before the first unit >= 0x80 (bit l: unit i + l is).
          (local.set $n
            (i32.ctz
              (i32.or
                (i32.or
                  (i16x8.bitmask (i16x8.gt_u (local.get $a) (local.get $top)))
                  (i32.shl (i16x8.bitmask (i16x8.gt_u (local.get $b) (local.get $top))) (i32.const 8)))
                (i32.or
                  (i32.shl (i16x8.bitmask (i16x8.gt_u (local.get $c2) (local.get $top))) (i32.const 16))
                  (i32.shl (i16x8.bitmask (i16x8.gt_u (local.get $d2) (local.get $top))) (i32.const 24))))))
          (local.set $o (i32.add (local.get $o) (local.get $n)))
          (local.set $i (i32.add (local.get $i) (local.get $n)))))
      ;; The keys ending by unit i end in ASCII (or are empty): byte end = unit end + (o - i).
      (local.set $d (i32.sub (local.get $o) (local.get $i)))
      (block $flushed
        (loop $flush
          (br_if $flushed (i32.ge_u (local.get $j) (local.get $count)))
          (local.set $at (i32.add (local.get $offs) (i32.shl (local.get $j) (i32.const 2))))
          (local.set $e (i32.load offset=4 (local.get $at)))
          (br_if $flushed (i32.gt_u (local.get $e) (local.get $i)))
          (i32.store offset=4 (local.get $at) (i32.add (local.get $e) (local.get $d)))
          (local.set $j (i32.add (local.get $j) (i32.const 1)))
          (br $flush)))
      (if (i32.ge_u (local.get $i) (local.get $total)) (then (return (local.get $count))))
      ;; Unit i is not ASCII and lies in key j (ending at unit e): room for the rest of the key?
      (if (i32.gt_u
            (i32.add (local.get $o) (i32.add (i32.sub (local.get $e) (local.get $i)) (i32.const 32)))
            (i32.add (local.get $src) (i32.shl (local.get $i) (i32.const 1))))
        (then (return (local.get $j))))
      ;; Units one by one up to the next ASCII unit, noting the keys that end on the way.
      (loop $scalar
        (if (i32.ge_u (local.get $i) (local.get $e))
          (then
            (loop $ends
              (i32.store
                (i32.add (local.get $offs) (i32.shl (i32.add (local.get $j) (i32.const 1)) (i32.const 2)))
                (local.get $o))
              (local.set $j (i32.add (local.get $j) (i32.const 1)))
              (if (i32.ge_u (local.get $j) (local.get $count)) (then (return (local.get $count))))
              (local.set $e
                (i32.load
                  (i32.add (local.get $offs) (i32.shl (i32.add (local.get $j) (i32.const 1)) (i32.const 2)))))
              (br_if $ends (i32.ge_u (local.get $i) (local.get $e))))
            (if (i32.gt_u
                  (i32.add (local.get $o) (i32.add (i32.sub (local.get $e) (local.get $i)) (i32.const 32)))
                  (i32.add (local.get $src) (i32.shl (local.get $i) (i32.const 1))))
              (then (return (local.get $j))))))
        (local.set $c
          (i32.load16_u (i32.add (local.get $src) (i32.shl (local.get $i) (i32.const 1)))))
        (br_if $stream (i32.lt_u (local.get $c) (i32.const 0x80)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (if (i32.lt_u (local.get $c) (i32.const 0x800))
          (then
            (i32.store8 (local.get $o) (i32.or (i32.const 0xc0) (i32.shr_u (local.get $c) (i32.const 6))))
            (i32.store8 offset=1 (local.get $o)
              (i32.or (i32.const 0x80) (i32.and (local.get $c) (i32.const 0x3f))))
            (local.set $o (i32.add (local.get $o) (i32.const 2)))
            (br $scalar)))
        (if (i32.ne (i32.and (local.get $c) (i32.const 0xf800)) (i32.const 0xd800))
          (then
            (i32.store8 (local.get $o) (i32.or (i32.const 0xe0) (i32.shr_u (local.get $c) (i32.const 12))))
            (i32.store8 offset=1 (local.get $o)
              (i32.or (i32.const 0x80) (i32.and (i32.shr_u (local.get $c) (i32.const 6)) (i32.const 0x3f))))
            (i32.store8 offset=2 (local.get $o)
              (i32.or (i32.const 0x80) (i32.and (local.get $c) (i32.const 0x3f))))
            (local.set $o (i32.add (local.get $o) (i32.const 3)))
            (br $scalar)))
        ;; A surrogate: a pair (high, then low, both in this key) is one code point of 4 bytes;
        ;; anything else is lone and becomes '?'.
        (if (i32.and
              (i32.lt_u (local.get $c) (i32.const 0xdc00))
              (i32.lt_u (local.get $i) (local.get $e)))
          (then
            (local.set $d
              (i32.load16_u (i32.add (local.get $src) (i32.shl (local.get $i) (i32.const 1)))))
            (if (i32.eq (i32.and (local.get $d) (i32.const 0xfc00)) (i32.const 0xdc00))
              (then
                (local.set $c
                  (i32.add (i32.const 0x10000)
                    (i32.or
                      (i32.shl (i32.and (local.get $c) (i32.const 0x3ff)) (i32.const 10))
                      (i32.and (local.get $d) (i32.const 0x3ff)))))
                (local.set $i (i32.add (local.get $i) (i32.const 1)))
                (i32.store8 (local.get $o)
                  (i32.or (i32.const 0xf0) (i32.shr_u (local.get $c) (i32.const 18))))
                (i32.store8 offset=1 (local.get $o)
                  (i32.or (i32.const 0x80) (i32.and (i32.shr_u (local.get $c) (i32.const 12)) (i32.const 0x3f))))
                (i32.store8 offset=2 (local.get $o)
                  (i32.or (i32.const 0x80) (i32.and (i32.shr_u (local.get $c) (i32.const 6)) (i32.const 0x3f))))
                (i32.store8 offset=3 (local.get $o)
                  (i32.or (i32.const 0x80) (i32.and (local.get $c) (i32.const 0x3f))))
                (local.set $o (i32.add (local.get $o) (i32.const 4)))
                (br $scalar)))))
        (i32.store8 (local.get $o) (i32.const 0x3f))
        (local.set $o (i32.add (local.get $o) (i32.const 1)))
        (br $scalar)))
    (local.get $count)))
