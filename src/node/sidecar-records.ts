/**
 * Reading the records of a data file for its sidecar filter, streaming (one record in memory):
 * lines, CSV (RFC 4180: quoted fields with `""` escapes and line breaks inside quotes; CRLF, LF or
 * CR, mixed), TSV (tab-separated, no quoting, as the IANA text/tab-separated-values type) and
 * NDJSON (one JSON value per line; blank lines skipped). A UTF-8 byte order mark at the start is
 * dropped.
 *
 * CSV and TSV are parsed by csv-parse (the CSV project's streaming parser) rather than by hand:
 * quoting rules are where hand-written parsers go wrong. NDJSON lines are checked with
 * `JSON.parse`, but a key is sliced from the line's own text (`jsonFieldText`), so a number is the
 * key it was written as (`1.0`, `1e2`, `12345678901234567890`), never a re-serialized double.
 */

import { createReadStream, type ReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { type CsvError, parse } from 'csv-parse';

/** The data file formats a sidecar can index. */
export type SidecarFormat = 'lines' | 'csv' | 'tsv' | 'ndjson';

/** An NDJSON record: the line as written and its parsed value. */
export interface JsonRecord {
  readonly text: string;
  readonly value: unknown;
}

/** Where a reader is in its file: bytes read so far (updated as the file streams in). */
export interface ReadPosition {
  bytes: number;
}

function openStream(path: string, position?: ReadPosition): ReadStream {
  const stream = createReadStream(path);
  if (position !== undefined) {
    stream.on('data', () => {
      position.bytes = stream.bytesRead;
    });
  }
  return stream;
}

async function* lines(path: string, position?: ReadPosition): AsyncGenerator<string> {
  const input = openStream(path, position);
  input.setEncoding('utf8');
  const rl = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  let first = true;
  try {
    for await (const line of rl) {
      if (first) {
        first = false;
        yield line.charCodeAt(0) === 0xfeff ? line.slice(1) : line;
      } else {
        yield line;
      }
    }
  } finally {
    rl.close();
    input.destroy();
  }
}

/** CSV (quoted) or TSV (no quoting) records through csv-parse; errors name the file and line. */
async function* delimited(
  path: string,
  delimiter: string,
  position?: ReadPosition,
): AsyncGenerator<string[]> {
  const input = openStream(path, position);
  const parser = parse({
    bom: true,
    delimiter,
    quote: delimiter === '\t' ? false : '"',
    record_delimiter: ['\r\n', '\n', '\r'],
    relax_column_count: true,
    relax_quotes: true,
    skip_empty_lines: true,
  });
  input.on('error', (error) => parser.destroy(error));
  input.pipe(parser);
  try {
    for await (const record of parser as AsyncIterable<string[]>) yield record;
  } catch (error) {
    const csv = error as Partial<CsvError>;
    if (typeof csv.code === 'string' && csv.code.startsWith('CSV_')) {
      throw new SyntaxError(`${path}, line ${csv.lines ?? '?'}: ${csv.message}`, { cause: error });
    }
    throw error;
  } finally {
    input.destroy();
    parser.destroy();
  }
}

async function* ndjsonRecords(path: string, position?: ReadPosition): AsyncGenerator<JsonRecord> {
  let n = 0;
  for await (const text of lines(path, position)) {
    n++;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text) as unknown;
    } catch (error) {
      throw new SyntaxError(`${path}, line ${n}: not valid JSON (${(error as Error).message})`);
    }
    yield { text, value };
  }
}

/**
 * The records of `path`: strings (lines), string arrays (CSV/TSV) or {@link JsonRecord}s
 * (NDJSON). `position.bytes`, when given, follows the bytes read.
 */
export function readRecords(
  path: string,
  format: SidecarFormat,
  position?: ReadPosition,
): AsyncGenerator<unknown> {
  switch (format) {
    case 'lines':
      return lines(path, position);
    case 'csv':
      return delimited(path, ',', position);
    case 'tsv':
      return delimited(path, '\t', position);
    case 'ndjson':
      return ndjsonRecords(path, position);
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;

function skipSpace(text: string, i: number): number {
  for (; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
  }
  return i;
}

/** The index after the string whose opening quote is at `i`. */
function skipString(text: string, i: number): number {
  for (i++; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
  }
  return i;
}

/** The index after the JSON value that starts at `i` (the text is valid JSON). */
function skipValue(text: string, i: number): number {
  const first = text.charCodeAt(i);
  if (first === QUOTE) return skipString(text, i);
  if (first === OPEN_BRACE || first === OPEN_BRACKET) {
    let depth = 0;
    while (i < text.length) {
      const c = text.charCodeAt(i);
      if (c === QUOTE) {
        i = skipString(text, i);
        continue;
      }
      if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return i + 1;
      i++;
    }
    return i;
  }
  // A number, true, false or null: up to the next delimiter.
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || skipSpace(text, i) > i) break;
    i++;
  }
  return i;
}

/**
 * The text of field `path` (`["user", "id"]` for `user.id`; a step into an array is an index) in
 * the JSON `text`, exactly as it is written there, or undefined when a step is missing. `text` must be valid JSON
 * (the caller parsed it); as `JSON.parse`, the last of repeated names wins. Linear in the text.
 */
export function jsonFieldText(text: string, path: readonly string[]): string | undefined {
  let start = skipSpace(text, 0);
  let end = skipValue(text, start);
  for (const part of path) {
    if (text.charCodeAt(start) === OPEN_BRACKET) {
      // An array step: `part` is an element index ("items.0.id").
      if (!/^(0|[1-9]\d*)$/.test(part)) return undefined;
      let i = skipSpace(text, start + 1);
      let index = 0;
      const wanted = Number(part);
      while (i < end && text.charCodeAt(i) !== CLOSE_BRACKET && index < wanted) {
        i = skipSpace(text, skipValue(text, i));
        if (text.charCodeAt(i) === COMMA) i = skipSpace(text, i + 1);
        index++;
      }
      if (i >= end || text.charCodeAt(i) === CLOSE_BRACKET) return undefined;
      start = i;
      end = skipValue(text, i);
      continue;
    }
    if (text.charCodeAt(start) !== OPEN_BRACE) return undefined;
    let found: [number, number] | undefined;
    let i = skipSpace(text, start + 1);
    while (i < end && text.charCodeAt(i) === QUOTE) {
      const nameEnd = skipString(text, i);
      const raw = text.slice(i + 1, nameEnd - 1);
      const name = raw.includes('\\') ? (JSON.parse(text.slice(i, nameEnd)) as string) : raw;
      i = skipSpace(text, skipSpace(text, nameEnd) + 1); // past the colon
      const valueEnd = skipValue(text, i);
      if (name === part) found = [i, valueEnd];
      i = skipSpace(text, valueEnd);
      if (text.charCodeAt(i) === COMMA) i = skipSpace(text, i + 1);
    }
    if (found === undefined) return undefined;
    [start, end] = found;
  }
  return text.slice(start, end);
}

/**
 * The key of an NDJSON field: a string's value; any other value as its JSON text exactly as
 * written in the line (`1.0` stays "1.0"); `null` and missing fields give no key.
 */
export function jsonFieldKey(record: JsonRecord, path: string): string | undefined {
  const text = jsonFieldText(record.text, path.split('.'));
  if (text === undefined || text === 'null') return undefined;
  return text.charCodeAt(0) === QUOTE ? (JSON.parse(text) as string) : text;
}
