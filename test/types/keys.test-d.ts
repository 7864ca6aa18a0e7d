/**
 * Type test, checked by `tsc` (tsconfig.node.json, part of `npm run typecheck`), never run: a
 * filter's key type follows its funnel, so a wrong key is a compile error, as with Guava's
 * `BloomFilter<T>`. Every `@ts-expect-error` line must fail to compile (tsc reports an unused
 * directive otherwise), and every other line must compile.
 */
import {
  BlockedBloomFilter,
  BloomFilter,
  CountingBloomFilter,
  CuckooFilter,
  type Funnel,
  type Key,
  type KeyOf,
  type MembershipFilter,
  ScalableBloomFilter,
} from '../../src/index.js';

/** True only when A and B are the same type (not merely assignable). */
type Equal<A, B> =
  (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const same = <A, B>(_proof: Equal<A, B>): void => {};

// The funnel -> key table.
same<KeyOf<'string'>, string>(true);
same<KeyOf<'utf16'>, string>(true);
same<KeyOf<'int'>, number>(true);
same<KeyOf<'long'>, bigint | number>(true);
same<KeyOf<'bytes'>, Uint8Array>(true);
same<KeyOf<Funnel>, Key>(true);
// @ts-expect-error a 'long' key is not a string
same<KeyOf<'long'>, string>(true);

// The default funnel is 'string'.
const urls = BloomFilter.create({ capacity: 1000, fpp: 0.01 });
same<typeof urls, BloomFilter<string>>(true);
urls.add('https://example.com/');
urls.has('https://example.com/');
// @ts-expect-error a string filter takes no numbers
urls.add(42);
// @ts-expect-error nor bytes
urls.has(new Uint8Array(4));
// @ts-expect-error batches are checked too
urls.addMany([1, 2, 3]);

// 'long': bigint or a safe-integer number, never a string.
const ids = BloomFilter.create({ capacity: 1000, fpp: 0.01, funnel: 'long' });
same<typeof ids, BloomFilter<bigint | number>>(true);
ids.add(42n);
ids.add(42);
ids.hasMany([1n, 2, 3n]);
// @ts-expect-error the mistake Guava's BloomFilter<Long> catches at compile time
ids.add('42');

// 'int': numbers only.
const ints = CountingBloomFilter.create({ capacity: 1000, fpp: 0.01, funnel: 'int' });
ints.add(7);
ints.remove(7);
// @ts-expect-error an 'int' filter takes no bigint
ints.add(7n);

// 'bytes': Uint8Array only.
const blobs = BlockedBloomFilter.create({ capacity: 1000, fpp: 0.01, funnel: 'bytes' });
blobs.add(new Uint8Array([1, 2, 3]));
// @ts-expect-error a 'bytes' filter takes no strings
blobs.add('abc');

const growing = ScalableBloomFilter.create({ capacity: 1000, fpp: 0.01, funnel: 'utf16' });
growing.add('ok');
// @ts-expect-error a 'utf16' filter takes strings
growing.add(1);

const cuckoo = CuckooFilter.create({ capacity: 1000, fpp: 0.01, funnel: 'long' });
cuckoo.add(1n);
// @ts-expect-error a 'long' cuckoo filter takes no strings
cuckoo.remove('1');

// Each filter is a MembershipFilter of its own key type, and not of another.
const asMember: MembershipFilter<bigint | number> = ids;
// @ts-expect-error a filter of strings is not a filter of longs
const notMember: MembershipFilter<bigint | number> = urls;

export { asMember, notMember };
