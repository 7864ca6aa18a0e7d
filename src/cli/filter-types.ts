/**
 * The filter types `create` can make from a capacity and a false positive rate: the rows of the
 * codec table that have a `create` (formats/registry.ts). `--type` takes their names and
 * aliases (`bloom` is another name for `classic`).
 */

import type { MembershipFilter } from '../filters/filter.js';
import type { Sizing } from '../formats/codec.js';
import { typeNamed, typesWith } from '../formats/registry.js';
import { CliError } from './command.js';

export type { Sizing };

/** The names `--type` offers, in table order. */
export const TYPE_NAMES: readonly string[] = typesWith('create');

/** A new empty filter of type `name` (`classic` when undefined). */
export function makeFilter(name: string | undefined, sizing: Sizing): MembershipFilter {
  try {
    return typeNamed(name ?? 'classic', 'create', '--type').create(sizing);
  } catch (error) {
    if (error instanceof RangeError || error instanceof TypeError) {
      throw new CliError(error.message);
    }
    throw error;
  }
}
