/**
 * What the command says about a filter past its capacity (`dedup`, `add`), and how it rounds the
 * small numbers it prints. The figure is the library's (`saturation()`, math.ts): the rate now
 * over the rate the filter's shape was made for, saturated past 10. A saturated filter still
 * never forgets a key, but answers "seen" for more and more keys never added.
 */

import type { Saturation } from '../filters/base.js';

/**
 * A rate or a probability for people: two significant digits, in plain notation down to 0.0001
 * and as `2.4e-7` below; exactly 0 and 1 as they are.
 */
export function roundRate(x: number): string {
  if (x === 0 || x === 1 || !Number.isFinite(x)) return String(x);
  if (x >= 1e-4) return String(Number(x.toPrecision(2)));
  const [mantissa, exponent] = x.toExponential(1).split('e');
  return `${mantissa}e${exponent}`;
}

/**
 * An expected count for people: "about 27", "about 0.38", "fewer than 0.01" (not `about
 * 1.09e-16`), "0": two significant digits below 100, whole numbers above.
 */
export function aboutCount(x: number): string {
  if (x < 0.01) return x === 0 ? '0' : 'fewer than 0.01';
  if (x < 100) return `about ${Number(x.toPrecision(2))}`;
  return `about ${Math.round(x)}`;
}

/** The `saturation` figure for `--json`: ratio to 3 significant digits, and the flag. */
export function saturationJson(s: Saturation): { saturation: number; saturated: boolean } {
  return { saturation: Number(s.ratio.toPrecision(3)), saturated: s.saturated };
}

/**
 * One line for standard error, `what` naming the filter (`the --state file s.bloom`): the rate
 * now, the design rate and capacity, what follows for the user (`effect`) and what to do.
 */
export function saturationWarning(
  command: string,
  what: string,
  s: Saturation,
  effect: string,
  remedy: string,
): string {
  const times = s.ratio >= 1e4 ? 'more than 10,000' : String(Math.round(s.ratio));
  const capacity = Number.isFinite(s.designCapacity)
    ? ` (at about ${Math.round(s.designCapacity).toLocaleString('en-US')} keys)`
    : '';
  return (
    `bloomkit ${command}: warning: ${what} is saturated: its false positive rate is now ` +
    `${roundRate(s.currentFpp)}, ${times} times its design rate ${roundRate(s.designFpp)}` +
    `${capacity}; ${effect}. ${remedy}\n`
  );
}
