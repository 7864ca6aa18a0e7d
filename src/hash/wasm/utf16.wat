;; Transcodes a run of JavaScript strings, copied into the memory as UTF-16LE code units (one
;; `Buffer#ucs2Write` of the joined strings: a straight copy, one call per chunk instead of one
;; per key), into their 'string' funnel bytes (hash/keys.ts): UTF-8, where a lone surrogate
;; becomes Java's `?` (0x3F) as `String.getBytes(UTF_8)` writes it (Buffer and TextEncoder write
;; U+FFFD, EF BF BD). Keys are transcoded one by one, so a surrogate pair split between two keys
;; is two lone surrogates, as it is key by key.
;;
;; 16 units per step with WebAssembly SIMD: the units are narrowed to 16 bytes and stored; the
;; step keeps the bytes before the first unit >= 0x80, from which units are encoded one by one
;; (2, 3 or 4 bytes, or `?`) up to the next ASCII unit, where 16-unit steps resume.
;;
;; The memory is imported: the caller's (a filter kernel's, hash/pack.ts lays the chunk out).
;; Build: npm run build:wasm (compiles this file with wabt into utf16-wasm.ts).
(module
  (import "env" "memory" (memory 1))
  ;; Transcodes `$count` keys whose units lie back to back from address `$src`. `$offs` holds
  ;; `$count + 1` u32: entry 0 is the address the first key's bytes go to; entry j + 1 is the
  ;; unit index (from `$src`) where key j ends. Each entry j + 1 is replaced by the address where
  ;; key j's bytes end; the last one is returned.
  ;;
  ;; Reads up to 32 bytes past the last unit and writes up to 16 bytes past the last byte (junk
  ;; the caller ignores). The output may overlap the input when it starts at least (units + 16)
  ;; bytes before `$src`: a step writes at most 16 bytes, and the writer, at most 3 bytes per
  ;; unit read, then never reaches a unit not yet read.
  (func (export "utf8") (param $src i32) (param $offs i32) (param $count i32) (result i32)
    (local $o i32) (local $i i32) (local $e i32) (local $j i32) (local $n i32) (local $mask i32)
    (local $a v128) (local $b v128) (local $c i32) (local $d i32) (local $top v128)
    (local.set $top (i16x8.splat (i32.const 0x7f)))
    (local.set $o (i32.load (local.get $offs)))
    (block $keys_done
      (loop $keys
        (br_if $keys_done (i32.ge_u (local.get $j) (local.get $count)))
        (local.set $j (i32.add (local.get $j) (i32.const 1)))
        (local.set $e (i32.load (i32.add (local.get $offs) (i32.shl (local.get $j) (i32.const 2)))))
        (block $key_done
          (loop $step
            (br_if $key_done (i32.ge_u (local.get $i) (local.get $e)))
            (local.set $a (v128.load (i32.add (local.get $src) (i32.shl (local.get $i) (i32.const 1)))))
            (local.set $b
              (v128.load offset=16 (i32.add (local.get $src) (i32.shl (local.get $i) (i32.const 1)))))
            ;; Bit l set: unit i + l is >= 0x80; only the units before the key's end count.
            (local.set $mask
              (i32.or
                (i16x8.bitmask (i16x8.gt_u (local.get $a) (local.get $top)))
                (i32.shl (i16x8.bitmask (i16x8.gt_u (local.get $b) (local.get $top))) (i32.const 8))))
            (local.set $n (i32.sub (local.get $e) (local.get $i)))
            (if (i32.lt_u (local.get $n) (i32.const 16))
              (then
                (local.set $mask
                  (i32.and (local.get $mask)
                    (i32.sub (i32.shl (i32.const 1) (local.get $n)) (i32.const 1)))))
              (else (local.set $n (i32.const 16))))
            (v128.store (local.get $o) (i8x16.narrow_i16x8_u (local.get $a) (local.get $b)))
            (if (i32.eqz (local.get $mask))
              (then
                (local.set $o (i32.add (local.get $o) (local.get $n)))
                (local.set $i (i32.add (local.get $i) (local.get $n)))
                (br $step)))
            ;; Keep the ASCII bytes before the first unit >= 0x80, then encode units one by one
            ;; while they are not ASCII (text in other scripts comes in words).
            (local.set $n (i32.ctz (local.get $mask)))
            (local.set $o (i32.add (local.get $o) (local.get $n)))
            (local.set $i (i32.add (local.get $i) (local.get $n)))
            (loop $scalar
              (br_if $key_done (i32.ge_u (local.get $i) (local.get $e)))
              (local.set $c
                (i32.load16_u (i32.add (local.get $src) (i32.shl (local.get $i) (i32.const 1)))))
              (br_if $step (i32.lt_u (local.get $c) (i32.const 0x80)))
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
              ;; A surrogate: a pair (high, then low, both in this key) is one code point of 4
              ;; bytes; anything else is lone and becomes '?'.
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
              (br $scalar))))
        (i32.store (i32.add (local.get $offs) (i32.shl (local.get $j) (i32.const 2))) (local.get $o))
        (br $keys)))
    (local.get $o)))
