/**
 * The benchmark's two key corpora, drawn deterministically (the same keys on every run):
 *
 * - `synthetic`: `https://example.com/item/<i>` present, `https://example.com/other/<i>` absent
 *   (26 to 32 ASCII characters), the corpus of earlier runs;
 * - `urls`: real-looking URLs as a crawl log holds them: a host from a few hundred sites under
 *   common and country TLDs, one to six path segments of words, ids and dates, now and then a
 *   query string; lengths spread over 20 to 200 characters; about 30% carry non-ASCII text
 *   (accented Latin, Cyrillic, Greek, CJK, the odd emoji) in the path or the host, as crawled
 *   URLs of international sites do once decoded. Key i is unique (it carries i in base 36 in
 *   its path); absent keys come from the same generator with a different marker, so both sets
 *   have the same length and character mix.
 *
 * Every key is a flat (sequential) string: V8's cons strings from concatenation would make the
 * first hash of each key pay for flattening, which is not what a key read from a file costs.
 */
import { mulberry32 } from '../test/support/random.js';

export type CorpusName = 'synthetic' | 'urls';

const TLDS = ['com', 'org', 'net', 'de', 'fr', 'jp', 'ru', 'io', 'co.uk', 'com.br', 'es', 'gr'];
const WORDS = [
  'news',
  'article',
  'products',
  'search',
  'user',
  'profile',
  'images',
  'category',
  'blog',
  'posts',
  'archive',
  'download',
  'docs',
  'help',
  'support',
  'cart',
  'checkout',
  'video',
  'watch',
  'music',
  'travel',
  'hotels',
  'weather',
  'sports',
  'football',
  'recipes',
  'health',
  'science',
  'tech',
  'reviews',
  'forum',
  'thread',
  'tags',
  'static',
  'assets',
  'api',
  'v2',
];
const INTERNATIONAL = [
  'café',
  'über-uns',
  'straße',
  'niño',
  'crème-brûlée',
  'são-paulo',
  'zürich',
  'københavn',
  'новости',
  'москва',
  'статья',
  'αθήνα',
  'ειδήσεις',
  '東京',
  'ニュース',
  '日本語',
  '北京',
  '新闻',
  '서울',
  '뉴스',
  'العربية',
  'עברית',
  'ελληνικά',
  '😀',
  '🎉-party',
  'smörgåsbord',
];
const QUERY_KEYS = ['id', 'q', 'page', 'ref', 'utm_source', 'lang', 'sort', 'session'];

/** A flat one-byte or two-byte string with the same characters (see the module comment). */
function flat(s: string): string {
  return JSON.parse(JSON.stringify(s)) as string;
}

function pick<T>(list: readonly T[], r: number): T {
  return list[Math.floor(r * list.length)]!;
}

/** URL number `i` of a corpus; `marker` tells present ('i') from absent ('o') keys. */
function url(i: number, marker: string, rnd: () => number): string {
  const target = 20 + Math.floor(rnd() * 181);
  const international = rnd() < 0.3;
  const site = `${pick(WORDS, rnd())}${Math.floor(rnd() * 300)}`;
  const host =
    international && rnd() < 0.25
      ? `${pick(INTERNATIONAL, rnd())}.${pick(TLDS, rnd())}`
      : `${rnd() < 0.5 ? 'www.' : ''}${site}.${pick(TLDS, rnd())}`;
  let s = `${rnd() < 0.9 ? 'https' : 'http'}://${host}/${marker}${i.toString(36)}`;
  let placedInternational = host.charCodeAt(0) >= 0x80;
  while (s.length < target) {
    const r = rnd();
    if (international && !placedInternational) {
      s += `/${pick(INTERNATIONAL, rnd())}`;
      placedInternational = true;
    } else if (r < 0.6) s += `/${pick(WORDS, rnd())}`;
    else if (r < 0.8) s += `/${Math.floor(rnd() * 1e9).toString(36)}`;
    else if (r < 0.9) s += `/20${10 + Math.floor(rnd() * 16)}/${1 + Math.floor(rnd() * 12)}`;
    else s += `?${pick(QUERY_KEYS, rnd())}=${Math.floor(rnd() * 1e6)}`;
  }
  if (s.length > 200) {
    s = s.slice(0, 200);
    const last = s.charCodeAt(199);
    if (last >= 0xd800 && last < 0xdc00) s = s.slice(0, 199); // never split a surrogate pair
  }
  return flat(s);
}

/** `n` keys of `corpus`: the present set (`absent` false) or a disjoint absent set. */
export function corpusKeys(corpus: CorpusName, n: number, absent: boolean): string[] {
  const out = new Array<string>(n);
  if (corpus === 'synthetic') {
    const prefix = absent ? 'https://example.com/other/' : 'https://example.com/item/';
    for (let i = 0; i < n; i++) out[i] = flat(`${prefix}${i}`);
    return out;
  }
  const rnd = mulberry32(absent ? 0x0b5e7 : 0x9e3779b9);
  const marker = absent ? 'o' : 'i';
  for (let i = 0; i < n; i++) out[i] = url(i, marker, rnd);
  return out;
}

/** Length and character statistics of a key set, for the report. */
export function describeKeys(keys: readonly string[]): {
  meanLength: number;
  minLength: number;
  maxLength: number;
  nonAscii: number;
} {
  let sum = 0;
  let min = Number.POSITIVE_INFINITY;
  let max = 0;
  let nonAscii = 0;
  for (const k of keys) {
    sum += k.length;
    min = Math.min(min, k.length);
    max = Math.max(max, k.length);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the ASCII range is the point
    if (/[^\u0000-\u007f]/.test(k)) nonAscii++;
  }
  return {
    meanLength: sum / keys.length,
    minLength: min,
    maxLength: max,
    nonAscii: nonAscii / keys.length,
  };
}
