/**
 * How a split-block filter hashes a JavaScript value of a Parquet column: XXH64 (seed 0) of the
 * value's PLAIN encoding for the column's physical type (see the table in sizing.ts), written into
 * `xxViews.hash`. A value of the wrong kind is a `TypeError` naming the type and the value.
 */

import { show } from '../../errors.js';
import type { Key } from '../../hash/keys.js';
import { xxh64Float, xxh64Key } from '../../hash/xxhash64.js';
import type { ParquetPhysicalType } from './sizing.js';

export function hashParquetValue(typeId: number, type: ParquetPhysicalType, value: Key): void {
  switch (typeId) {
    case 6: // BYTE_ARRAY
      if (typeof value === 'string') xxh64Key('string', value);
      else if (value instanceof Uint8Array) xxh64Key('bytes', value);
      else throw wrongKind(type, value, 'a string or a Uint8Array');
      return;
    case 2: // INT64
      xxh64Key('long', value);
      return;
    case 1: // INT32
      xxh64Key('int', value);
      return;
    case 5: // DOUBLE
    case 4: // FLOAT
      if (typeof value !== 'number') throw wrongKind(type, value, 'a number');
      xxh64Float(value, typeId === 5 ? 8 : 4);
      return;
    default: // FIXED_LEN_BYTE_ARRAY, INT96
      if (!(value instanceof Uint8Array)) throw wrongKind(type, value, 'a Uint8Array');
      if (typeId === 3 && value.length !== 12) {
        throw new RangeError(`a value for an INT96 column must be 12 bytes, got ${value.length}`);
      }
      xxh64Key('bytes', value);
  }
}

function wrongKind(type: ParquetPhysicalType, value: unknown, expected: string): TypeError {
  return new TypeError(`a value for a ${type} column must be ${expected}, got ${show(value)}`);
}
