/**
 * CRC-32C, the native format's checksum, against a real reference: Java's
 * `java.util.zip.CRC32C` (JDK 9+), run once over files of seeded random bytes. Both of bloomkit's
 * loops are held to it: the JavaScript loop (`crc32cOf`, what the browser core uses) and the
 * WebAssembly loop of `crc32cBulk` (what bloomkit/node's load and save use), at the lengths where
 * each changes path (the 8-byte steps and their tail, the bulk threshold, the 64 KiB copies into
 * the module's memory), from unaligned offsets, and continued across any split point.
 */

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { crc32cOf } from '../src/formats/crc32c.js';
import { BULK_FROM, crc32cBulk } from '../src/formats/crc32c-bulk.js';
import { requireJava } from './support/guava.js';
import { mulberry32 } from './support/random.js';

/**
 * A short JVM run on the quick settings test/support/guava.ts gives its short harness runs: C1
 * only and the serial collector (the source launcher's compile and these few MB need no more;
 * measured: about 1.2 s of CPU with the defaults, 0.9 s with these).
 */
const JAVA_QUICK = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

const JAVA = `
import java.nio.file.*;
import java.util.zip.CRC32C;
public class Crc {
  public static void main(String[] args) throws Exception {
    for (String a : args) {
      CRC32C c = new CRC32C();
      c.update(Files.readAllBytes(Path.of(a)));
      System.out.println(Long.toHexString(c.getValue()));
    }
  }
}
`;

const LENGTHS = [
  0,
  1,
  7,
  8,
  9,
  255,
  BULK_FROM - 1,
  BULK_FROM,
  BULK_FROM + 1,
  65_535,
  65_536,
  65_537,
  200_003,
  (1 << 20) + 5,
];

function randomBytes(n: number, seed: number): Uint8Array {
  const next = mulberry32(seed);
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(next() * 256);
  return out;
}

const dir = mkdtempSync(join(tmpdir(), 'bloomkit-crc-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe.skipIf(!requireJava())("CRC-32C against Java's java.util.zip.CRC32C", () => {
  // Each case is viewed 3 bytes into a larger buffer, so neither loop may assume alignment.
  const cases = LENGTHS.map((n, i) => randomBytes(n + 3, 1000 + i).subarray(3));
  const files = cases.map((bytes, i) => {
    const file = join(dir, `case-${i}.bin`);
    writeFileSync(file, bytes);
    return file;
  });
  const source = join(dir, 'Crc.java');
  writeFileSync(source, JAVA);
  const java = spawnSync('java', [...JAVA_QUICK, source, ...files], {
    encoding: 'utf8',
    timeout: 60_000,
  });

  it('Java ran', () => {
    expect(java.status, java.stderr).toBe(0);
  });

  it("gives Java's value for every length, in JavaScript and in WebAssembly", () => {
    const expected = java.stdout.trim().split('\n');
    expect(expected).toHaveLength(cases.length);
    for (const [i, bytes] of cases.entries()) {
      const want = Number.parseInt(expected[i]!, 16);
      expect(crc32cOf(bytes), `JavaScript, ${bytes.length} bytes`).toBe(want);
      expect(crc32cBulk(bytes), `WebAssembly, ${bytes.length} bytes`).toBe(want);
    }
  });

  it('continues a CRC across any split point, from either loop into the other', () => {
    const expected = java.stdout.trim().split('\n');
    const i = LENGTHS.indexOf(200_003);
    const bytes = cases[i]!;
    const want = Number.parseInt(expected[i]!, 16);
    const next = mulberry32(7);
    const splits = [0, 1, BULK_FROM, 65_536, bytes.length];
    for (let s = 0; s < 20; s++) splits.push(Math.floor(next() * bytes.length));
    for (const at of splits) {
      const a = bytes.subarray(0, at);
      const b = bytes.subarray(at);
      expect(crc32cBulk(b, crc32cBulk(a)), `bulk, split at ${at}`).toBe(want);
      expect(crc32cOf(b, crc32cBulk(a)), `bulk then JavaScript, split at ${at}`).toBe(want);
      expect(crc32cBulk(b, crc32cOf(a)), `JavaScript then bulk, split at ${at}`).toBe(want);
    }
  });

  it('has the check value crc32c("123456789") = 0xE3069283 in both loops', () => {
    const digits = new TextEncoder().encode('123456789');
    expect(crc32cOf(digits)).toBe(0xe3069283);
    const long = new Uint8Array(BULK_FROM + 9);
    long.set(digits, BULK_FROM);
    // The same value through the WebAssembly loop: the digits after BULK_FROM zero bytes, from
    // the CRC of those zeros.
    expect(crc32cBulk(long)).toBe(crc32cOf(digits, crc32cOf(long.subarray(0, BULK_FROM))));
  });
});
