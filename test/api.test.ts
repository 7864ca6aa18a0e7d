/**
 * What a person meets first, for every native type of the codec table: a one-line `toString` and
 * `console.log` (not the bit array), `JSON.stringify` that `fromJSON` reads back, `describeFilter`
 * facts, and readers that say what the bytes are when they are given the wrong kind of file.
 */
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import { GOLDEN_CASES } from '../scripts/golden-cases.js';
import {
  BloomFilter,
  CODECS,
  describeFilter,
  detectFormat,
  FormatError,
  fromBytes,
  fromJSON,
} from '../src/index.js';
import { expectBytes } from './support/bytes.js';

const NATIVE = GOLDEN_CASES.filter((c) => c.type !== 7 && c.kind !== 'sidecar');

describe('every native type', () => {
  it('has golden cases for every codec', () => {
    const types = new Set(NATIVE.map((c) => c.type));
    for (const c of CODECS) expect(types.has(c.typeId), c.name).toBe(true);
  });

  for (const c of NATIVE) {
    it(`${c.file}: one-line toString/inspect, JSON round trip, describeFilter`, async () => {
      const f = fromBytes(await c.build());
      const line = String(f);
      expect(line).not.toContain('\n');
      expect(line.length).toBeLessThan(200);
      expect(line).toMatch(/^[A-Z]\w+ \{ .+ \}$/);
      expect(inspect(f)).toBe(line);
      const json = JSON.stringify(f);
      expect(JSON.parse(json)).toMatchObject({ format: 'bloomkit', type: f.constructor.name });
      const back = fromJSON(json);
      expect(back.constructor).toBe(f.constructor);
      expectBytes(back.toBytes(), f.toBytes());
      const facts = describeFilter(f);
      expect(facts.typeId).toBe(c.type);
      expect(typeof facts.type).toBe('string');
      expect(() => JSON.stringify(facts)).not.toThrow();
    });
  }

  it('fromJSON rejects what toJSON did not write, naming it', () => {
    expect(() => fromJSON({ format: 'other', base64: '' })).toThrow(TypeError);
    expect(() => fromJSON({ format: 'bloomkit', base64: '!!' })).toThrow(/base64/);
  });
});

describe('the wrong kind of bytes', () => {
  const f = BloomFilter.create({ capacity: 100, fpp: 0.01 });
  f.add('x');

  it('fromBytes on Guava bytes says to use fromGuava', () => {
    expect(detectFormat(f.toGuava())).toBe('guava');
    expect(() => fromBytes(f.toGuava())).toThrow(FormatError);
    expect(() => fromBytes(f.toGuava())).toThrow(/fromGuava/);
  });

  it('fromGuava on bloomkit bytes says to use fromBytes', () => {
    expect(detectFormat(f.toBytes())).toBe('native');
    expect(() => BloomFilter.fromGuava(f.toBytes())).toThrow(/fromBytes/);
  });

  it('recognises Parquet files and Mozilla MLBF cascades', () => {
    expect(detectFormat(new TextEncoder().encode('PAR1....'))).toBe('parquet-file');
    const mlbf = readFileSync(new URL('./fixtures/mlbf/test_v2_murmur_mlbf', import.meta.url));
    expect(detectFormat(new Uint8Array(mlbf))).toBe('mlbf');
    expect(() => fromBytes(new Uint8Array(mlbf))).toThrow(/MLBF/);
  });
});
