/**
 * Proof against a real Parquet writer: DuckDB writes files with split-block Bloom filters
 * (dictionary-encoded columns), and bloomkit's answers must equal DuckDB's own
 * `parquet_bloom_probe(file, column, value)` for every probed value, with no false negative.
 * Rebuilding each filter from its row group's values must also give the stored bytes exactly.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { parquetMetadata } from 'hyparquet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FormatError,
  readParquetBloomFilters as readParquetBytes,
  SplitBlockBloomFilter,
} from '../src/index.js';
import { type ParquetBloomFilterEntry, readParquetBloomFilters } from '../src/node.js';
import { HANGING_PARQUET_HEADER } from './fuzz/readers.js';
import { mulberry32 } from './support/random.js';

const ROW_GROUPS = 3;
/** Rows per row group: a multiple of DuckDB's 2048-row vectors, so groups split exactly there. */
const GROUP_ROWS = 40_960;
/** Distinct values per row group; DuckDB keeps a dictionary (and writes a filter) at this ratio. */
const DISTINCT = 4000;
/** Row group g holds the value ids g·STRIDE .. g·STRIDE + DISTINCT − 1 (overlapping groups). */
const STRIDE = 3000;
const TOTAL_IDS = (ROW_GROUPS - 1) * STRIDE + DISTINCT; // 10,000 distinct ids in the file

const SUFFIXES = ['', '-é', '-中文', '-😀'];
/** The string of value id v, as the SQL below builds it. */
const stringOf = (v: number): string => `user-${v}${SUFFIXES[v % 4]}`;
/** The BIGINT of value id v (negative and positive, up to about ±4.6e18). */
const bigintOf = (v: number): bigint =>
  BigInt(v) * 922_337_203_685_477n - 4_611_686_018_427_387_904n;

let dir: string;
let file: string;
let db: DuckDBInstance;
let con: DuckDBConnection;
let entries: ParquetBloomFilterEntry[];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'bloomkit-parquet-'));
  file = join(dir, 'values.parquet');
  db = await DuckDBInstance.create();
  con = await db.connect();
  await con.run('SET threads = 1');
  const id = `((i // ${GROUP_ROWS}) * ${STRIDE} + (i * 7919) % ${DISTINCT})`;
  await con.run(`
    COPY (
      SELECT
        'user-' || ${id} || CASE ${id} % 4 WHEN 0 THEN '' WHEN 1 THEN '-é' WHEN 2 THEN '-中文' ELSE '-😀' END AS s,
        ${id} * 922337203685477 - 4611686018427387904 AS b,
        (${id} * 37 - 100000)::INTEGER AS i32,
        (${id} / 7.0)::DOUBLE AS d
      FROM range(${ROW_GROUPS * GROUP_ROWS}) t(i)
    ) TO '${file}' (FORMAT parquet, ROW_GROUP_SIZE ${GROUP_ROWS})`);
  entries = await readParquetBloomFilters(file);
});

afterAll(async () => {
  con?.closeSync();
  rmSync(dir, { recursive: true, force: true });
});

/** DuckDB's answers: for each value, for each row group, whether its filter may contain it. */
async function duckdbProbes(column: string, literals: string[]): Promise<boolean[][]> {
  const out: boolean[][] = literals.map(() => []);
  // The probe takes literals only (no lateral join), so probes go 500 to a UNION ALL query.
  for (let start = 0; start < literals.length; start += 500) {
    const batch = literals.slice(start, start + 500);
    const sql = batch
      .map(
        (literal, j) =>
          `SELECT ${start + j} AS i, row_group_id, bloom_filter_excludes FROM parquet_bloom_probe('${file}', '${column}', ${literal})`,
      )
      .join(' UNION ALL ');
    const rows = (await con.runAndReadAll(`${sql} ORDER BY i, row_group_id`)).getRows();
    expect(rows.length).toBe(ROW_GROUPS * batch.length);
    for (const [i, , excludes] of rows) out[Number(i)]!.push(excludes === false);
  }
  return out;
}

const sqlString = (s: string): string => `'${s.replaceAll("'", "''")}'`;

function filtersOf(column: string): SplitBlockBloomFilter[] {
  const found = entries.filter((e) => e.column === column).sort((a, b) => a.rowGroup - b.rowGroup);
  expect(found.map((e) => e.rowGroup)).toEqual([0, 1, 2]);
  return found.map((e) => e.filter);
}

/** Value ids in row group g. */
const idsOf = (g: number): number[] => Array.from({ length: DISTINCT }, (_, j) => g * STRIDE + j);

/** Every 4th id of the file is probed (each probe costs DuckDB a read of the filters). */
const PROBED_IDS = Array.from({ length: TOTAL_IDS / 4 }, (_, k) => 4 * k);

/** Whether value number i of a probe list (PROBED_IDS first, then outside values) is in group g. */
const isIn = (i: number, g: number): boolean => {
  const id = PROBED_IDS[i];
  return id !== undefined && id >= g * STRIDE && id < g * STRIDE + DISTINCT;
};

/**
 * Compares bloomkit with DuckDB for every (value, row group) pair; a present pair must answer
 * true (no false negative). Returns the pair counts.
 */
function comparePairs<T>(
  values: T[],
  duck: boolean[][],
  has: (value: T, group: number) => boolean,
  isPresent: (index: number, group: number) => boolean,
): { present: number; absent: number; falsePositives: number } {
  let present = 0;
  let absent = 0;
  let falsePositives = 0;
  values.forEach((value, i) => {
    for (let g = 0; g < ROW_GROUPS; g++) {
      const ours = has(value, g);
      if (ours !== duck[i]![g]) {
        throw new Error(
          `row group ${g}, value ${String(value)}: bloomkit ${ours}, DuckDB ${duck[i]![g]}`,
        );
      }
      if (isPresent(i, g)) {
        present++;
        if (!ours) throw new Error(`false negative: row group ${g}, value ${String(value)}`);
      } else {
        absent++;
        if (ours) falsePositives++;
      }
    }
  });
  return { present, absent, falsePositives };
}

describe('readParquetBloomFilters on a file written by DuckDB', () => {
  it('finds one filter per column chunk, with the column, row group and physical type', () => {
    const meta = parquetMetadata(new Uint8Array(readFileSync(file)));
    expect(meta.row_groups.map((g) => Number(g.num_rows))).toEqual([
      GROUP_ROWS,
      GROUP_ROWS,
      GROUP_ROWS,
    ]);
    const seen = entries.map((e) => `${e.rowGroup}:${e.column}:${e.type}`).sort();
    expect(seen).toEqual(
      [0, 1, 2]
        .flatMap((g) => [`${g}:b:INT64`, `${g}:d:DOUBLE`, `${g}:i32:INT32`, `${g}:s:BYTE_ARRAY`])
        .sort(),
    );
  });

  it('rebuilds every stored filter bit for bit from its row group values', () => {
    const bytes = readFileSync(file);
    const meta = parquetMetadata(new Uint8Array(bytes));
    const valueFor: Record<string, (v: number) => string | bigint | number> = {
      s: stringOf,
      b: bigintOf,
      i32: (v) => v * 37 - 100000,
      d: (v) => v / 7,
    };
    for (const entry of entries) {
      const chunk = meta.row_groups[entry.rowGroup]!.columns.find(
        (c) => c.meta_data?.path_in_schema.join('.') === entry.column,
      )!.meta_data!;
      const offset = Number(chunk.bloom_filter_offset);
      const stored = bytes.subarray(offset, offset + chunk.bloom_filter_length!);
      const rebuilt = new SplitBlockBloomFilter({ blocks: entry.filter.blocks, type: entry.type });
      for (const v of idsOf(entry.rowGroup)) rebuilt.add(valueFor[entry.column]!(v));
      expect(rebuilt.equals(entry.filter), `${entry.column} row group ${entry.rowGroup}`).toBe(
        true,
      );
      expect(Buffer.from(rebuilt.toParquet()).equals(stored)).toBe(true);
    }
  });

  // Each probe answers for all three row groups: 2,500 of the file's ids give 3,000 (value,
  // row group) pairs where the value is present and 4,500 where it is absent, and 500 values from
  // outside the file give 1,500 more absent pairs.
  it('answers like parquet_bloom_probe for 3,000 present and 6,000 absent string pairs', async () => {
    const filters = filtersOf('s');
    const present = PROBED_IDS.map(stringOf);
    const outside = Array.from({ length: 500 }, (_, j) => stringOf(TOTAL_IDS + 17 * j + 1));
    outside[0] = '';
    outside[1] = "it's absent";
    const values = [...present, ...outside];
    const duck = await duckdbProbes('s', values.map(sqlString));
    const pairs = comparePairs(
      values,
      duck,
      (v, g) => filters[g]!.has(v),
      (i, g) => isIn(i, g),
    );
    expect(pairs.present).toBe(3000);
    expect(pairs.absent).toBe(6000);
    // DuckDB sized these filters at about 16 bits per value: false positives are rare.
    expect(pairs.falsePositives).toBeLessThan(0.005 * pairs.absent);
  });

  it('answers like parquet_bloom_probe for 3,000 present and 6,000 absent BIGINT pairs', async () => {
    const filters = filtersOf('b');
    const present = PROBED_IDS.map(bigintOf);
    // Neighbours of present values (present ones are 922,337,203,685,477 apart) and the extremes.
    const outside = Array.from({ length: 500 }, (_, v) => bigintOf(20 * v) + 1n);
    outside[0] = -(2n ** 63n);
    outside[1] = 2n ** 63n - 1n;
    const values = [...present, ...outside];
    const duck = await duckdbProbes(
      'b',
      values.map((v) => (v === -(2n ** 63n) ? `(${v + 1n} - 1)::BIGINT` : `${v}::BIGINT`)),
    );
    const pairs = comparePairs(
      values,
      duck,
      (v, g) => filters[g]!.has(v),
      (i, g) => isIn(i, g),
    );
    expect(pairs.present).toBe(3000);
    expect(pairs.absent).toBe(6000);
    expect(pairs.falsePositives).toBeLessThan(0.005 * pairs.absent);
  });

  it('answers like parquet_bloom_probe for INTEGER and DOUBLE columns', async () => {
    const ints = filtersOf('i32');
    const doubles = filtersOf('d');
    const ids = Array.from({ length: 500 }, (_, j) => j * 19);
    const intValues = ids.map((v) => v * 37 - 100000 + (v % 2));
    const duckInts = await duckdbProbes(
      'i32',
      intValues.map((v) => `${v}::INTEGER`),
    );
    intValues.forEach((v, i) => {
      expect(ints.map((f) => f.has(v))).toEqual(duckInts[i]);
    });
    const doubleValues = ids.map((v) => (v % 2 === 0 ? v / 7 : v / 7 + 0.5));
    const duckDoubles = await duckdbProbes(
      'd',
      doubleValues.map((v) => `${v.toPrecision(17)}::DOUBLE`),
    );
    doubleValues.forEach((v, i) => {
      expect(doubles.map((f) => f.has(v))).toEqual(duckDoubles[i]);
    });
  });

  it('rejects a path that is not a Parquet file', async () => {
    await expect(readParquetBloomFilters(join(dir, 'missing.parquet'))).rejects.toThrow(/ENOENT/);
    await expect(readParquetBloomFilters(42 as never)).rejects.toThrow(TypeError);
  });
});

describe('hostile Parquet bytes', () => {
  /** The file's bytes and where its first filter (column s, row group 0) starts. */
  const original = () => {
    const bytes = new Uint8Array(readFileSync(file));
    const meta = parquetMetadata(
      bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length),
    );
    const first = meta.row_groups[0]!.columns[0]!.meta_data!;
    expect(first.path_in_schema).toEqual(['s']);
    return { bytes, offset: Number(first.bloom_filter_offset) };
  };

  it('a 12-byte header declaring 2^63 booleans is a FormatError at once, not a hang', () => {
    expect(() =>
      SplitBlockBloomFilter.fromParquet(HANGING_PARQUET_HEADER, { type: 'INT64' }),
    ).toThrow(
      /Parquet bloom filter header: list at byte 1 declares \d+ elements, which need at least \d+ bytes; 1 remain/,
    );
  });

  it('a DuckDB file with 11 bytes overwritten at bloom_filter_offset: a FormatError naming the file', async () => {
    const { bytes, offset } = original();
    bytes.set(HANGING_PARQUET_HEADER.subarray(0, 11), offset);
    const damaged = join(dir, 'damaged-header.parquet');
    writeFileSync(damaged, bytes);
    const message = `column s, row group 0, bloom filter at ${offset}: Parquet bloom filter header: list at byte 1 declares`;
    await expect(readParquetBloomFilters(damaged)).rejects.toThrow(`${damaged}: ${message}`);
    await expect(readParquetBloomFilters(bytes)).rejects.toThrow(`Parquet file: ${message}`);
  });

  it('an empty file and 400 seeded footer corruptions: only FormatErrors, each naming the file', async () => {
    const empty = join(dir, 'empty.parquet');
    writeFileSync(empty, new Uint8Array(0));
    await expect(readParquetBloomFilters(empty)).rejects.toThrow(
      `${empty}: not a readable Parquet footer (0 bytes)`,
    );
    const { bytes } = original();
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
    const footer = view.getUint32(bytes.length - 8, true) + 8;
    const random = mulberry32(1500);
    const kinds = new Map<string, number>();
    const corrupt = join(dir, 'corrupt.parquet');
    for (let round = 0; round < 400; round++) {
      const bad = bytes.slice();
      const edits = 1 + Math.floor(random() * 3);
      for (let e = 0; e < edits; e++) {
        bad[bad.length - 1 - Math.floor(random() * footer)] = Math.floor(random() * 256);
      }
      const viaPath = round % 10 === 0;
      if (viaPath) writeFileSync(corrupt, bad);
      try {
        const entries = viaPath
          ? await readParquetBloomFilters(corrupt)
          : await readParquetBytes(bad, `corrupt-${round}.parquet`);
        for (const { filter } of entries) filter.estimatedCount();
        kinds.set('accepted', (kinds.get('accepted') ?? 0) + 1);
      } catch (error) {
        const name = (error as Error).constructor.name;
        kinds.set(name, (kinds.get(name) ?? 0) + 1);
        expect(error, String(error)).toBeInstanceOf(FormatError);
        expect(
          (error as Error).message.startsWith(viaPath ? corrupt : `corrupt-${round}.parquet`),
        ).toBe(true);
      }
    }
    expect([...kinds.keys()].filter((k) => k !== 'accepted')).toEqual(['FormatError']);
    expect(kinds.get('FormatError')).toBeGreaterThan(60);
  });
});
