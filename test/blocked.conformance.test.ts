import { BlockedBloomFilter, fromBytes } from '../src/index.js';
import { type FilterAdapter, runConformance } from './conformance/suite.js';

function adapt(f: BlockedBloomFilter): FilterAdapter {
  return {
    add: (k) => f.add(k),
    has: (k) => f.has(k),
    clear: () => f.clear(),
    roundTrip: () => adapt(fromBytes(f.toBytes()) as BlockedBloomFilter),
    addWrongKind: () => f.add(42),
  };
}

runConformance({
  name: 'BlockedBloomFilter',
  create: (o) => adapt(BlockedBloomFilter.create(o)),
  createRaw: (o) => BlockedBloomFilter.create(o as never),
  fppSlack: 1,
});

runConformance({
  name: 'BlockedBloomFilter (shared memory)',
  create: (o) => adapt(BlockedBloomFilter.create({ ...o, shared: true })),
  fppSlack: 1,
});

runConformance({
  name: 'BlockedBloomFilter (batch addMany/hasMany)',
  create: (o) => {
    const f = BlockedBloomFilter.create(o);
    return {
      ...adapt(f),
      add: (k) => f.addMany([k]) === 1,
      has: (k) => f.hasMany([k])[0] === true,
    };
  },
  fppSlack: 1,
});
