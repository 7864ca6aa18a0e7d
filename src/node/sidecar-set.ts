/**
 * The query side of sidecar filters (sidecar.ts): a `SidecarSet` loads the sidecars of a set of
 * data files and answers which files may contain a key.
 *
 * Guarantee: a file that holds the key is always listed, provided its sidecar describes the file
 * as it is now (same base name, size and mtime). A file whose sidecar is missing, older than the
 * file, damaged, foreign or unreadable is listed by every query and reported in `unchecked`; the
 * other files keep answering. A file without the key is listed with probability about its
 * sidecar's `fpp`.
 */

import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { FormatError, show } from '../errors.js';
import type { ReadonlyMembershipFilter } from '../filters/filter.js';
import { type KeyPart, rowColKey } from '../hash/composite-keys.js';
import { readSidecar, type SidecarInfo, sidecarPath } from './sidecar-file.js';

interface Entry {
  path: string;
  info: SidecarInfo;
  filter: ReadonlyMembershipFilter;
}

/** A data file that every query lists, because its filter cannot be trusted. */
export interface UncheckedFile {
  path: string;
  reason: 'missing' | 'stale' | 'damaged' | 'unreadable';
  detail: string;
}

/** The sidecars of a set of data files, answering which files may contain a key. */
export class SidecarSet {
  /** Every data file of the set, in the order given. */
  readonly files: readonly string[];
  /**
   * Files listed by every query: no sidecar, a sidecar older than the file, a damaged or foreign
   * one (`'damaged'`), or one that could not be read (`'unreadable'`: permissions, a directory).
   */
  readonly unchecked: readonly UncheckedFile[];
  private readonly entries: readonly (Entry | null)[];

  private constructor(files: string[], entries: (Entry | null)[], unchecked: UncheckedFile[]) {
    this.files = files;
    this.entries = entries;
    this.unchecked = unchecked;
  }

  /** Loads the sidecars of `dataPaths` and checks each against its data file's size and mtime. */
  static async open(dataPaths: readonly string[]): Promise<SidecarSet> {
    if (!Array.isArray(dataPaths) || dataPaths.some((p) => typeof p !== 'string')) {
      throw new TypeError(`dataPaths must be an array of paths, got ${show(dataPaths)}`);
    }
    const entries: (Entry | null)[] = [];
    const unchecked: UncheckedFile[] = [];
    for (const path of dataPaths) {
      const data = await stat(path);
      let sidecar: { info: SidecarInfo; filter: ReadonlyMembershipFilter };
      try {
        sidecar = await readSidecar(path);
      } catch (error) {
        // Whatever is wrong with one sidecar is that file's problem alone: it is listed always.
        const code = (error as { code?: string }).code;
        if (code === 'ENOENT')
          unchecked.push({ path, reason: 'missing', detail: `no ${sidecarPath(path)}` });
        else if (error instanceof FormatError)
          unchecked.push({ path, reason: 'damaged', detail: error.message });
        else
          unchecked.push({
            path,
            reason: 'unreadable',
            detail: `${sidecarPath(path)}: ${(error as Error).message}`,
          });
        entries.push(null);
        continue;
      }
      const { info } = sidecar;
      if (info.source !== basename(path)) {
        unchecked.push({
          path,
          reason: 'stale',
          detail: `the sidecar was built for ${show(info.source)}`,
        });
        entries.push(null);
        continue;
      }
      if (info.size !== data.size || info.mtimeMs !== data.mtimeMs) {
        unchecked.push({
          path,
          reason: 'stale',
          detail: `built for ${info.size} bytes at mtime ${info.mtimeMs}, the file has ${data.size} bytes at mtime ${data.mtimeMs}`,
        });
        entries.push(null);
        continue;
      }
      entries.push({ path, ...sidecar });
    }
    return new SidecarSet([...dataPaths], entries, unchecked);
  }

  /** The metadata of each file's sidecar (null where unchecked), in file order. */
  infos(): (SidecarInfo | null)[] {
    return this.entries.map((e) => e?.info ?? null);
  }

  /** Files that may hold `value` in their ROW sidecar's field (plus every unchecked file). */
  filesFor(value: string): string[] {
    if (typeof value !== 'string')
      throw new TypeError(`value must be a string, got ${show(value)}`);
    return this.query('row', value);
  }

  /** Files that may hold the cell (row, family, qualifier) in their ROWCOL sidecar. */
  filesForCell(row: KeyPart, family: KeyPart, qualifier: KeyPart): string[] {
    return this.query('rowcol', rowColKey(row, family, qualifier));
  }

  private query(kind: 'row' | 'rowcol', key: string | Uint8Array): string[] {
    const out: string[] = [];
    for (let i = 0; i < this.files.length; i++) {
      const entry = this.entries[i];
      if (entry === null || entry === undefined) {
        out.push(this.files[i]!);
        continue;
      }
      if (entry.info.bloom !== kind) {
        throw new TypeError(
          `${entry.path}'s sidecar holds ${entry.info.bloom.toUpperCase()} keys; use ${kind === 'row' ? 'filesForCell' : 'filesFor'}`,
        );
      }
      if (entry.filter.has(key)) out.push(entry.path);
    }
    return out;
  }
}
