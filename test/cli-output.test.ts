/**
 * The command's output buffer (src/cli/output.ts): `records` prints the selected records of a
 * batch by moving them together in the batch's own buffer first; checked against printing each
 * selected record on its own, for random selections, CRLF records, empty records, an
 * unterminated last record that ends at the very end of the buffer, and regions larger than one
 * output buffer.
 */

import { describe, expect, it } from 'vitest';
import { Output } from '../src/cli/output.js';
import { collector } from './support/cli.js';
import { mulberry32 } from './support/random.js';

/** A batch as RecordReader makes it: records split at `sep`, `\r` kept in the record. */
function batchOf(text: Buffer, sep: number) {
  const starts: number[] = [];
  const ends: number[] = [];
  for (let s = 0; s < text.length; ) {
    let e = text.indexOf(sep, s);
    if (e < 0) e = text.length;
    starts.push(s);
    ends.push(e);
    s = e + 1;
  }
  return { starts: Uint32Array.from(starts), ends: Uint32Array.from(ends), count: starts.length };
}

async function printed(
  text: Buffer,
  answers: Uint8Array,
  want: number,
  sep = 0x0a,
): Promise<{ bytes: Buffer; selected: number }> {
  const { starts, ends, count } = batchOf(text, sep);
  const out = collector();
  const output = new Output(out.stream);
  // The batch's buffer holds exactly the text: the last record may end at its very end.
  const data = Buffer.from(text);
  const selected = output.records(data, starts, ends, count, answers, want, sep);
  await output.end();
  return { bytes: out.bytes(), selected };
}

function expected(text: Buffer, answers: Uint8Array, want: number, sep = 0x0a): Buffer {
  const { starts, ends, count } = batchOf(text, sep);
  const parts: Buffer[] = [];
  for (let i = 0; i < count; i++) {
    if (answers[i] === want) parts.push(text.subarray(starts[i]!, ends[i]!), Buffer.from([sep]));
  }
  return Buffer.concat(parts);
}

describe('Output.records', () => {
  it('prints exactly the selected records, each with its separator, in order', async () => {
    const rnd = mulberry32(7);
    for (let round = 0; round < 200; round++) {
      const n = 1 + Math.floor(rnd() * 40);
      const lines: string[] = [];
      for (let i = 0; i < n; i++) {
        const len = Math.floor(rnd() * 6);
        let line = 'x'.repeat(len) + String(i);
        if (rnd() < 0.1) line = '';
        if (rnd() < 0.2) line += '\r';
        lines.push(line);
      }
      // Half the inputs end without a separator: the last record then ends the buffer.
      const text = Buffer.from(lines.join('\n') + (round % 2 === 0 ? '\n' : ''));
      const count = batchOf(text, 0x0a).count;
      const answers = new Uint8Array(count);
      const p = rnd();
      for (let i = 0; i < count; i++) answers[i] = rnd() < p ? 1 : 0;
      for (const want of [0, 1]) {
        const r = await printed(text, answers, want);
        expect(r.bytes.toString('latin1')).toBe(expected(text, answers, want).toString('latin1'));
        expect(r.selected).toBe(answers.filter((a) => a === want).length);
      }
    }
  });

  it('appends the separator of an unterminated last record that fills the buffer', async () => {
    const text = Buffer.from('a\nb\nc');
    const answers = Uint8Array.from([0, 1, 1]);
    expect((await printed(text, answers, 1)).bytes.toString()).toBe('b\nc\n');
    expect((await printed(Buffer.from('abc'), Uint8Array.from([1]), 1)).bytes.toString()).toBe(
      'abc\n',
    );
    const nul = Buffer.from('k1\0k2');
    expect((await printed(nul, Uint8Array.from([1, 1]), 1, 0)).bytes).toEqual(
      Buffer.from('k1\0k2\0'),
    );
  });

  it('copies regions larger than one output buffer whole', async () => {
    const lines = Array.from({ length: 60_000 }, (_, i) => `https://example.com/${i}`);
    const text = Buffer.from(`${lines.join('\n')}\n`);
    const answers = new Uint8Array(lines.length).fill(1);
    answers[30_000] = 0;
    const r = await printed(text, answers, 1);
    expect(r.bytes.equals(expected(text, answers, 1))).toBe(true);
    expect(r.selected).toBe(lines.length - 1);
  });
});
