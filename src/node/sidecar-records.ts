/**
 * Reading the records of a data file for its sidecar filter, streaming (one record in memory):
 * lines, CSV (RFC 4180: quoted fields with `""` escapes and line breaks inside quotes, CRLF or LF),
 * TSV (tab-separated lines, no quoting, as the IANA text/tab-separated-values type) and NDJSON
 * (one JSON value per line; blank lines skipped). A UTF-8 byte order mark at the start is dropped.
 */

import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';

/** The data file formats a sidecar can index. */
export type SidecarFormat = 'lines' | 'csv' | 'tsv' | 'ndjson';

async function* lines(path: string): AsyncGenerator<string> {
  const rl = createInterface({
    input: createReadStream(path, { encoding: 'utf8' }),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
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
  }
}

// CSV parser states.
const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
/** A quote inside a quoted field: either the first of `""` or the closing quote. */
const QUOTE_IN_QUOTED = 3;

/** RFC 4180 records, streamed: quoted fields may hold the delimiter, `""` and line breaks. */
async function* csvRecords(path: string, delimiter: string): AsyncGenerator<string[]> {
  const stream = createReadStream(path, { encoding: 'utf8' });
  let state: number = FIELD_START;
  let field = '';
  let record: string[] = [];
  let first = true;
  let lastWasCr = false;
  for await (const chunk of stream as AsyncIterable<string>) {
    let text = chunk;
    if (first) {
      first = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const out: string[][] = [];
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (state === QUOTE_IN_QUOTED) {
        if (c === '"') {
          field += '"';
          state = QUOTED;
          continue;
        }
        state = UNQUOTED; // the field's closing quote; anything after it is kept as text
      }
      if (state === QUOTED) {
        if (c === '"') state = QUOTE_IN_QUOTED;
        else field += c;
        continue;
      }
      if (c === '\n' && lastWasCr) {
        lastWasCr = false;
        continue;
      }
      lastWasCr = false;
      if (c === delimiter) {
        record.push(field);
        field = '';
        state = FIELD_START;
      } else if (c === '\n' || c === '\r') {
        lastWasCr = c === '\r';
        record.push(field);
        field = '';
        state = FIELD_START;
        if (!(record.length === 1 && record[0] === '')) out.push(record);
        record = [];
      } else if (c === '"' && state === FIELD_START) {
        state = QUOTED;
      } else {
        field += c;
        state = UNQUOTED;
      }
    }
    yield* out;
  }
  if (state === QUOTED) {
    throw new SyntaxError(`${path}: a quoted CSV field is not closed at the end of the file`);
  }
  if (state !== FIELD_START || record.length > 0) {
    record.push(field);
    if (!(record.length === 1 && record[0] === '')) yield record;
  }
}

async function* tsvRecords(path: string): AsyncGenerator<string[]> {
  for await (const line of lines(path)) {
    if (line !== '') yield line.split('\t');
  }
}

async function* ndjsonRecords(path: string): AsyncGenerator<unknown> {
  let n = 0;
  for await (const line of lines(path)) {
    n++;
    if (line.trim() === '') continue;
    try {
      yield JSON.parse(line) as unknown;
    } catch (error) {
      throw new SyntaxError(`${path}, line ${n}: not valid JSON (${(error as Error).message})`);
    }
  }
}

/** The records of `path`: strings (lines), string arrays (CSV/TSV) or JSON values (NDJSON). */
export function readRecords(path: string, format: SidecarFormat): AsyncGenerator<unknown> {
  switch (format) {
    case 'lines':
      return lines(path);
    case 'csv':
      return csvRecords(path, ',');
    case 'tsv':
      return tsvRecords(path);
    case 'ndjson':
      return ndjsonRecords(path);
  }
}

/**
 * The key text of an NDJSON field value: strings as they are; numbers, booleans and other
 * values as their JSON text (`42` → "42"); `null` and missing fields give no key.
 */
export function jsonKeyText(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** Field `path` ("a" or "a.b.c") of a JSON value, or undefined. */
export function jsonField(record: unknown, path: string): unknown {
  let value: unknown = record;
  for (const part of path.split('.')) {
    if (value === null || typeof value !== 'object' || !Object.hasOwn(value, part))
      return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}
