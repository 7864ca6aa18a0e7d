;; Finds record separators (newlines, or NUL bytes for `-0`) for the command's record reader
;; (cli/separators.ts), 16 bytes per step with WebAssembly SIMD: JavaScript's per-line
;; `indexOf` calls cost about as much as hashing the line.
;;
;; The memory is imported: the reader's (cli/separators.ts lays it out): the positions found at
;; `$out`, the input bytes after them, and at least 16 readable bytes after the input's end.
;; Build: npm run build:wasm (compiles this file with wabt into separators-wasm.ts).
(module
  (import "env" "memory" (memory 1))
  ;; Writes the address of each byte equal to `$sep` in [$p, $end) to `$out` (u32 each, in
  ;; order), at most `$max` of them, and returns how many. Fewer than `$max` means the range is
  ;; done; `$max` means the caller goes on from the byte after the last one. Reads up to 15 bytes
  ;; past `$end` (and ignores them).
  (func (export "find") (param $p i32) (param $end i32) (param $sep i32) (param $out i32)
    (param $max i32) (result i32)
    (local $n i32) (local $mask i32) (local $needle v128)
    (local.set $needle (i8x16.splat (local.get $sep)))
    (block $done
      (loop $scan
        (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $mask
          (i8x16.bitmask (i8x16.eq (v128.load (local.get $p)) (local.get $needle))))
        ;; The last step: drop the bytes at or past $end.
        (if (i32.lt_u (i32.sub (local.get $end) (local.get $p)) (i32.const 16))
          (then
            (local.set $mask
              (i32.and (local.get $mask)
                (i32.sub
                  (i32.shl (i32.const 1) (i32.sub (local.get $end) (local.get $p)))
                  (i32.const 1))))))
        (block $bits_done
          (loop $bits
            (br_if $bits_done (i32.eqz (local.get $mask)))
            (if (i32.ge_u (local.get $n) (local.get $max)) (then (return (local.get $n))))
            (i32.store (i32.add (local.get $out) (i32.shl (local.get $n) (i32.const 2)))
              (i32.add (local.get $p) (i32.ctz (local.get $mask))))
            (local.set $n (i32.add (local.get $n) (i32.const 1)))
            (local.set $mask (i32.and (local.get $mask) (i32.sub (local.get $mask) (i32.const 1))))
            (br $bits)))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $scan)))
    (local.get $n)))
