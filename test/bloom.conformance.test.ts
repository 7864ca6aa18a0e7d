import { BloomFilter, fromBytes } from '../src/index.js';
import { type FilterAdapter, runConformance } from './conformance/suite.js';

function adapt(f: BloomFilter): FilterAdapter {
  return {
    add: (k) => f.add(k),
    has: (k) => f.has(k),
    clear: () => f.clear(),
    roundTrip: () => adapt(fromBytes(f.toBytes()) as BloomFilter),
    addWrongKind: () => f.add(42),
  };
}

runConformance({
  name: 'BloomFilter',
  create: (o) => adapt(BloomFilter.create(o)),
  createRaw: (o) => BloomFilter.create(o as never),
});

runConformance({
  name: 'BloomFilter (shared memory)',
  create: (o) => adapt(BloomFilter.create({ ...o, shared: true })),
});

runConformance({
  name: 'BloomFilter (Guava bytes)',
  create: (o) => {
    const f = BloomFilter.create(o);
    return { ...adapt(f), roundTrip: () => adapt(BloomFilter.fromGuava(f.toGuava())) };
  },
});
