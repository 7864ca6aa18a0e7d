// Types for the peer library bloomfilter@1.1 (it ships none); only what the benchmark uses.
declare module 'bloomfilter' {
  export class BloomFilter {
    constructor(m: number, k: number);
    readonly m: number;
    readonly k: number;
    static withTargetError(n: number, error: number): BloomFilter;
    add(v: string): void;
    test(v: string): boolean;
  }
}
