/**
 * A bounded reader of the Thrift compact protocol, as Parquet writes its structures
 * (https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md): just enough
 * to read a struct's fields and skip any value, for bytes from anywhere.
 *
 * Bounds (what makes it safe on hostile bytes):
 * - Work is proportional to the bytes present: every value read or skipped consumes at least one
 *   byte, and a list, set or map declares its size up front, so a size larger than the bytes left
 *   (each element takes at least 1 byte, each map entry 2) is rejected before the loop starts.
 *   A varint is at most 10 bytes; a binary's length is checked against the bytes left.
 * - Nesting is at most {@link MAX_DEPTH} deep (structs, lists, sets and maps).
 * - Nothing is allocated per value: skipped values are only walked over.
 * - Every failure is a `FormatError` naming the source, the field, the value and the limit.
 *
 * Compact types: 1 BOOLEAN_TRUE, 2 BOOLEAN_FALSE (in a field header the value is the type; in a
 * list each element is one byte), 3 BYTE, 4 I16, 5 I32, 6 I64 (zigzag varints), 7 DOUBLE (8
 * bytes), 8 BINARY (varint length + bytes), 9 LIST, 10 SET (header byte: size << 4 | element
 * type, size 15 = a varint follows), 11 MAP (varint size, then key type << 4 | value type when
 * size > 0), 12 STRUCT (fields until a 0 byte; a field header is id delta << 4 | type, delta 0 =
 * a zigzag i16 id follows).
 */

import { FormatError } from '../errors.js';

/** Deepest nesting of structs and containers accepted. */
export const MAX_DEPTH = 16;

const TYPE_NAMES = [
  'STOP',
  'BOOLEAN_TRUE',
  'BOOLEAN_FALSE',
  'BYTE',
  'I16',
  'I32',
  'I64',
  'DOUBLE',
  'BINARY',
  'LIST',
  'SET',
  'MAP',
  'STRUCT',
];

/** The fewest bytes one element of compact type `type` takes inside a list, set or map. */
function minElementBytes(type: number): number {
  return type === 7 ? 8 : 1;
}

export class CompactReader {
  /** The next byte to read. */
  pos: number;

  /**
   * @param bytes the bytes to read
   * @param start where the first value starts
   * @param source what the bytes are, for error messages (a file name, "Parquet bloom filter header")
   */
  constructor(
    private readonly bytes: Uint8Array,
    start = 0,
    readonly source = 'thrift compact bytes',
  ) {
    this.pos = start;
  }

  /** Bytes left after {@link pos}. */
  get remaining(): number {
    return this.bytes.length - this.pos;
  }

  private fail(message: string): never {
    throw new FormatError(`${this.source}: ${message}`);
  }

  byte(field = 'value'): number {
    const b = this.bytes[this.pos];
    if (b === undefined) {
      this.fail(
        `truncated: ${field} at byte ${this.pos} lies past the end (${this.bytes.length} bytes)`,
      );
    }
    this.pos++;
    return b;
  }

  /** Skips `n` bytes, which must be present. */
  private advance(n: number, field: string): void {
    if (n > this.remaining) {
      this.fail(
        `truncated: ${field} at byte ${this.pos} needs ${n} bytes, ${this.remaining} remain`,
      );
    }
    this.pos += n;
  }

  /** An unsigned varint of up to 10 bytes (64 bits), as a double: exact below 2^53. */
  varint(field = 'varint'): number {
    const start = this.pos;
    let result = 0;
    let scale = 1;
    for (let i = 0; i < 10; i++) {
      const b = this.byte(field);
      result += (b & 0x7f) * scale;
      if ((b & 0x80) === 0) return result;
      scale *= 128;
    }
    return this.fail(`${field} at byte ${start} is a varint longer than 10 bytes`);
  }

  /** A zigzag-encoded signed varint. */
  zigzag(field = 'integer'): number {
    const v = this.varint(field);
    return v % 2 === 0 ? v / 2 : -(v + 1) / 2;
  }

  /** A declared element count, checked against the bytes left (each element takes `min` bytes). */
  private count(size: number, min: number, what: string, at: number): number {
    if (size * min > this.remaining) {
      this.fail(
        `${what} at byte ${at} declares ${size} elements, which need at least ${size * min} bytes; ${this.remaining} remain`,
      );
    }
    return size;
  }

  private checkDepth(depth: number): void {
    if (depth > MAX_DEPTH) {
      this.fail(`values nest ${depth} deep at byte ${this.pos}, more than the limit ${MAX_DEPTH}`);
    }
  }

  /** Skips one value of compact type `type`; `inList` for the one-byte booleans of containers. */
  skip(type: number, depth: number, inList = false): void {
    this.checkDepth(depth);
    switch (type) {
      case 1: // BOOLEAN_TRUE
      case 2: // BOOLEAN_FALSE: the value is in the field header, or one byte in a container
        if (inList) this.advance(1, 'boolean');
        return;
      case 3:
        this.advance(1, 'byte');
        return;
      case 4:
      case 5:
      case 6:
        this.varint(TYPE_NAMES[type]);
        return;
      case 7:
        this.advance(8, 'double');
        return;
      case 8: {
        const at = this.pos;
        const length = this.varint('binary length');
        if (length > this.remaining) {
          this.fail(`binary at byte ${at} declares ${length} bytes, ${this.remaining} remain`);
        }
        this.pos += length;
        return;
      }
      case 9:
      case 10: {
        const at = this.pos;
        const head = this.byte('list header');
        const elem = head & 0x0f;
        this.checkElementType(elem, 'list element type', at);
        const size = this.count(
          head >> 4 === 15 ? this.varint('list size') : head >> 4,
          minElementBytes(elem),
          'list',
          at,
        );
        for (let i = 0; i < size; i++) this.skip(elem, depth + 1, true);
        return;
      }
      case 11: {
        const at = this.pos;
        const size = this.varint('map size');
        if (size === 0) return;
        const kinds = this.byte('map types');
        this.checkElementType(kinds >> 4, 'map key type', at);
        this.checkElementType(kinds & 0x0f, 'map value type', at);
        this.count(size, minElementBytes(kinds >> 4) + minElementBytes(kinds & 0x0f), 'map', at);
        for (let i = 0; i < size; i++) {
          this.skip(kinds >> 4, depth + 1, true);
          this.skip(kinds & 0x0f, depth + 1, true);
        }
        return;
      }
      case 12:
        this.struct((_id, t) => this.skip(t, depth + 1), depth + 1);
        return;
      default:
        this.fail(`unknown compact type ${type} at byte ${this.pos} (types are 1..12)`);
    }
  }

  private checkElementType(type: number, field: string, at: number): void {
    if (type < 1 || type > 12) {
      this.fail(`${field} ${type} at byte ${at} is not a compact type (1..12)`);
    }
  }

  /**
   * Reads a struct, calling `field(id, type)` for each field; the callback must consume the
   * field's value (read it, or `skip(type, depth + 1)`).
   */
  struct(field: (id: number, type: number) => void, depth: number): void {
    this.checkDepth(depth);
    let last = 0;
    for (;;) {
      const head = this.byte('field header');
      if (head === 0) return;
      const delta = head >> 4;
      const type = head & 0x0f;
      const id = delta === 0 ? this.zigzag('field id') : last + delta;
      last = id;
      field(id, type);
    }
  }

  /** Reads a union of empty-struct variants (Parquet's enums as unions); returns the variant id. */
  union(name: string, depth: number): number {
    let variant = -1;
    this.struct((id, type) => {
      if (type !== 12) {
        this.fail(`${name} variant ${id} has compact type ${type}, expected a struct (12)`);
      }
      this.skip(type, depth + 1);
      variant = id;
    }, depth);
    return variant;
  }
}
