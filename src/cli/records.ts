/**
 * Cuts a byte source into records (lines, or NUL-terminated with `-0`) and packs each record's key
 * for the filters' batch paths, without ever making a JavaScript string of a key.
 *
 * The source is read in large slices (1 MiB, more when one record is longer) into one buffer. A
 * batch is every whole record in the buffer: record i lies at `data[starts[i], ends[i])` (the
 * separator excluded), where it was read, so a command prints records from the input bytes as
 * they are. The keys (see `PackedKeys`) are, for the `'string'` and `'bytes'` funnels, views of
 * the records where they lie (nothing copied; UTF-8 is what the file holds, so invalid UTF-8 is
 * hashed as the bytes it is); with `-f`, the selected fields joined by the delimiter (copied);
 * 4 or 8 little-endian bytes of a decimal integer for `'int'` / `'long'`; UTF-16LE for `'utf16'`.
 *
 * The rules are those of `splitRecords` in the core: a trailing separator does not make an empty
 * last record, an unterminated last record counts, an empty line is an empty key, and a `\r`
 * before a `\n` is not part of the key (CRLF and LF files give the same keys), though it is
 * printed with the record; `keepCr` (`--keep-cr`) keeps it in the key. A batch's buffers are
 * reused: it is valid until the next `next()`.
 */

import type { PackedKeys } from '../filters/filter.js';
import type { Funnel } from '../index.js';
import { recordBounds } from '../node/record-bounds.js';
import { CliError } from './command.js';
import type { ByteSource } from './input.js';
import { copyBytes, MAX_FOUND, SEPARATOR_BASE, SeparatorBuffer } from './separators.js';

export interface RecordOptions {
  /** The byte that ends a record: 0x0a (newline) or 0x00 (`-0`). */
  readonly separator: number;
  /** 0-based field numbers that make up the key, or null for the whole record. */
  readonly fields: readonly number[] | null;
  /** The byte between fields (for `fields`). */
  readonly delimiter: number;
  /** How a key's text becomes key bytes. */
  readonly funnel: Funnel;
  /** Keep a `\r` before a `\n` in the key (`--keep-cr`); default false (CRLF = LF). */
  readonly keepCr?: boolean;
}

export interface RecordBatch {
  /** The buffer the records lie in. */
  readonly data: Uint8Array;
  /** Record i is `data[starts[i], ends[i])`. */
  readonly starts: Uint32Array;
  readonly ends: Uint32Array;
  /** Number of records. */
  readonly count: number;
  /** Each record's key, packed (`keys.offsets.length === count + 1`). */
  readonly keys: PackedKeys;
  /** 1-based number of record 0 within its source (for messages). */
  readonly firstRecord: number;
}

/**
 * Bytes read per batch: large enough that per-batch costs vanish (about 20,000 URL lines), small
 * enough to stay a small part of the command's memory (with 4 MiB, `dedup` held 3 MiB more).
 */
const SLICE = 1 << 20;

/** Reads `RecordBatch`es from one source. */
export class RecordReader {
  /** The input buffer and its separator search (`sep.buf` is the buffer). */
  private readonly sep = new SeparatorBuffer(SLICE);
  private buf: Buffer = this.sep.buf;
  private len = 0;
  /** Bytes at the front of `buf` that the last batch used (moved out before the next read). */
  private used = 0;
  private eof = false;
  private recordNo = 1;
  private starts = new Uint32Array(1024);
  private ends = new Uint32Array(1024);
  private keyEnds = new Uint32Array(1024);
  private offsets = new Uint32Array(1024);
  private keyBuf: Uint8Array = new Uint8Array(0);
  private readonly decoder = new TextDecoder('utf-8');

  constructor(
    readonly source: ByteSource,
    private readonly options: RecordOptions,
  ) {}

  /** The next batch of whole records, or null at the end of the source. */
  async next(): Promise<RecordBatch | null> {
    if (this.used > 0) {
      this.buf.copyWithin(0, this.used, this.len);
      this.len -= this.used;
      this.used = 0;
    }
    const sep = this.options.separator;
    // The bytes kept from the last batch hold no separator (it ended at the last one): only the
    // bytes read since are searched, so a record of gigabytes read from a pipe in 64 KiB pieces
    // is searched once, not once per piece (which took 34 s for one 300 MB line, 3.5 s for 100).
    let searched = this.len;
    for (;;) {
      if (!this.eof && this.len < this.buf.length) {
        const n = await this.source.read(this.buf.subarray(this.len));
        if (n === 0) this.eof = true;
        else this.len += n;
      }
      const at = this.buf.subarray(searched, this.len).lastIndexOf(sep);
      const last = at < 0 ? -1 : searched + at;
      searched = this.len;
      if (last >= 0) return this.batch(last + 1);
      if (this.eof) return this.len === 0 ? null : this.batch(this.len);
      if (this.len === this.buf.length) this.grow();
    }
  }

  private grow(): void {
    this.sep.grow(this.len);
    this.buf = this.sep.buf;
  }

  /** The records in `buf[0, end)`. */
  private batch(end: number): RecordBatch {
    const { buf } = this;
    const sep = this.options.separator;
    const cr = sep === 0x0a && this.options.keepCr !== true;
    let count = 0;
    // The arrays in locals (the hot loop of every command): reloaded only when they grow.
    let { starts, ends, keyEnds } = this;
    let s = 0;
    const found = this.sep.found;
    for (;;) {
      const n = this.sep.scan(s, end, sep);
      // Room for these records, and for the last one without a separator.
      while (count + n + 1 >= starts.length) {
        this.growRecords();
        ({ starts, ends, keyEnds } = this);
      }
      // In a function of its own (node/record-bounds.ts says why).
      s = recordBounds(found, n, SEPARATOR_BASE, buf, s, count, starts, keyEnds, cr, ends);
      count += n;
      if (n < MAX_FOUND) break;
    }
    // An unterminated last record (at the end of the source).
    if (s < end) {
      starts[count] = s;
      ends[count] = end;
      keyEnds[count] = cr && end > s && buf[end - 1] === 0x0d ? end - 1 : end;
      count++;
    }
    starts[count] = end;
    this.used = end;
    const firstRecord = this.recordNo;
    this.recordNo += count;
    const keys = this.packKeys(count, end, firstRecord);
    return { data: buf, starts: this.starts, ends: this.ends, count, keys, firstRecord };
  }

  private growRecords(): void {
    const n = this.starts.length * 2;
    const grow = (a: Uint32Array) => {
      const b = new Uint32Array(n);
      b.set(a);
      return b;
    };
    this.starts = grow(this.starts);
    this.ends = grow(this.ends);
    this.keyEnds = grow(this.keyEnds);
    this.offsets = grow(this.offsets);
  }

  private keyRoom(bytes: number): Uint8Array {
    if (this.keyBuf.length < bytes) this.keyBuf = new Uint8Array(Math.max(bytes, SLICE));
    return this.keyBuf;
  }

  private packKeys(count: number, end: number, firstRecord: number): PackedKeys {
    const { funnel, fields } = this.options;
    const { buf, starts, keyEnds, offsets } = this;
    if (fields === null && (funnel === 'string' || funnel === 'bytes')) {
      return {
        bytes: buf,
        offsets: starts.subarray(0, count + 1),
        ends: keyEnds.subarray(0, count),
      };
    }
    const encoded =
      funnel === 'utf16' ? 2 * end + 16 : funnel === 'int' || funnel === 'long' ? 8 * count : end;
    // With -f the joined fields are staged at the write position before they are encoded.
    const wide = encoded + (fields !== null ? end : 0);
    const out = this.keyRoom(wide);
    let w = 0;
    offsets[0] = 0;
    for (let i = 0; i < count; i++) {
      let s = starts[i]!;
      let e = keyEnds[i]!;
      let text: Uint8Array = buf;
      if (fields !== null) {
        // The joined fields are written at `w`, then encoded from there (in place for bytes).
        const n = this.joinFields(s, e, out, w);
        if (funnel === 'string' || funnel === 'bytes') {
          w += n;
          offsets[i + 1] = w;
          continue;
        }
        text = out;
        s = w;
        e = w + n;
      }
      switch (funnel) {
        case 'string':
        case 'bytes':
          copyBytes(text, s, e, out, w);
          w += e - s;
          break;
        case 'int':
        case 'long':
          w += writeInteger(funnel, text, s, e, out, w, () => this.where(firstRecord + i));
          break;
        case 'utf16': {
          const str = this.decoder.decode(text.subarray(s, e));
          for (let j = 0; j < str.length; j++, w += 2) {
            const c = str.charCodeAt(j);
            out[w] = c & 0xff;
            out[w + 1] = c >>> 8;
          }
          break;
        }
      }
      offsets[i + 1] = w;
    }
    return { bytes: out.subarray(0, w), offsets: offsets.subarray(0, count + 1) };
  }

  private where(record: number): string {
    return `${this.source.name}: ${this.options.separator === 0 ? 'record' : 'line'} ${record}`;
  }

  /** Writes the selected fields of `buf[s, e)`, joined by the delimiter, at `out[w]`. */
  private joinFields(s: number, e: number, out: Uint8Array, w: number): number {
    const { buf } = this;
    const { delimiter } = this.options;
    const fields = this.options.fields!;
    const start = w;
    for (let f = 0; f < fields.length; f++) {
      if (f > 0) out[w++] = delimiter;
      // Field numbers are few; finding each from the record start keeps any order working.
      let p = s;
      for (let skip = fields[f]!; skip > 0 && p <= e; skip--) {
        const d = buf.indexOf(delimiter, p);
        p = d < 0 || d >= e ? e + 1 : d + 1;
      }
      if (p > e) continue; // the record has fewer fields: this one is empty
      let q = buf.indexOf(delimiter, p);
      if (q < 0 || q > e) q = e;
      copyBytes(buf, p, q, out, w);
      w += q - p;
    }
    return w - start;
  }
}

const TWO_32 = 4294967296;

/** Parses the decimal integer in `text[s, e)` and writes it little-endian; returns 4 or 8. */
function writeInteger(
  funnel: 'int' | 'long',
  text: Uint8Array,
  s: number,
  e: number,
  out: Uint8Array,
  w: number,
  where: () => string,
): number {
  let p = s;
  const negative = text[p] === 0x2d;
  if (negative || text[p] === 0x2b) p++;
  let value = 0;
  let big: bigint | null = null;
  if (p === e || e - p > 19) throw notInteger(funnel, text, s, e, where);
  for (; p < e; p++) {
    const d = text[p]! - 0x30;
    if (d < 0 || d > 9) throw notInteger(funnel, text, s, e, where);
    if (big !== null) big = big * 10n + BigInt(d);
    else if (value >= 1e14) big = BigInt(value) * 10n + BigInt(d);
    else value = value * 10 + d;
  }
  if (funnel === 'int') {
    const v = negative ? -value : value;
    if (big !== null || v < -2147483648 || v > 2147483647)
      throw outOfRange(funnel, text, s, e, where);
    put32(out, w, v | 0);
    return 4;
  }
  if (big !== null) {
    const v = negative ? -big : big;
    if (v < -(2n ** 63n) || v >= 2n ** 63n) throw outOfRange(funnel, text, s, e, where);
    put32(out, w, Number(BigInt.asUintN(32, v)));
    put32(out, w + 4, Number(BigInt.asUintN(32, v >> 32n)));
    return 8;
  }
  const v = negative ? -value : value;
  put32(out, w, v >>> 0);
  put32(out, w + 4, Math.floor(v / TWO_32) | 0);
  return 8;
}

function put32(out: Uint8Array, p: number, v: number): void {
  out[p] = v & 0xff;
  out[p + 1] = (v >>> 8) & 0xff;
  out[p + 2] = (v >>> 16) & 0xff;
  out[p + 3] = v >>> 24;
}

function shown(text: Uint8Array, s: number, e: number): string {
  const t = new TextDecoder().decode(text.subarray(s, Math.min(e, s + 40)));
  return JSON.stringify(e - s > 40 ? `${t}...` : t);
}

function notInteger(funnel: string, text: Uint8Array, s: number, e: number, where: () => string) {
  return new CliError(
    `${where()}: ${shown(text, s, e)} is not a decimal integer (--funnel ${funnel})`,
  );
}

function outOfRange(funnel: string, text: Uint8Array, s: number, e: number, where: () => string) {
  const range = funnel === 'int' ? '[-2^31, 2^31)' : '[-2^63, 2^63)';
  return new CliError(`${where()}: ${shown(text, s, e)} is outside ${range} (--funnel ${funnel})`);
}
