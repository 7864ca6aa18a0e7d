import { closeSync, openSync } from 'node:fs';
import { createClient } from 'redis';
import { RedisBloomFilter } from '../../src/redis.js';
import { DEPTH, WINDOW } from '../../src/sharded/ops.js';
import { startRedis } from '../../test/support/redis-server.js';
import { recording, replay } from './shared.js';
const n = Number(process.argv[2] ?? 200000);
const server = await startRedis();
const client = createClient({ url: server.url, disableOfflineQueue: true });
client.on('error', () => undefined);
await client.connect();
const keys = Array.from({ length: n }, (_, i) => `https://example.com/item/${i}`);
const opts = { capacity: Number(process.argv[3] ?? 1_000_000), fpp: 0.01 };
const fd = openSync('/dev/null', 'w');
const rec = recording(client, fd);
let f = await RedisBloomFilter.create(rec, 'gap', opts);
rec.active = true;
await f.addMany(keys);
closeSync(fd);
const kept = rec.kept, count = rec.commands();
const packed: any = { isReady: true, sendCommand: (a: string[], o?: object) => client.sendCommand([...a], o) };
const g = await RedisBloomFilter.open(packed, 'gap');
f = await RedisBloomFilter.open(client, 'gap');
const res: Record<string, number[]> = {};
const perWindow = Math.max(1, Math.round(count / Math.ceil(n / WINDOW)));
const fresh = (a: string[]) => client.sendCommand(a.map((x) => (' ' + x).slice(1)));
for (let r = 0; r < 5; r++) {
  for (const [label, run] of [
    ['bloomkit add', () => f.addMany(keys)],
    ['bloomkit packed-copy add', () => g.addMany(keys)],
    ['prebuilt add', () => replay((a) => client.sendCommand(a), kept, count, perWindow, DEPTH)],
    ['prebuilt fresh-strings add', () => replay(fresh, kept, count, perWindow, DEPTH)],
  ] as const) {
    const c0 = process.cpuUsage(); const t = performance.now();
    await run();
    const c = process.cpuUsage(c0); const ms = performance.now() - t;
    if (r > 0) (res[label] ??= []).push((c.user + c.system) / n, n / ms / 1000);
  }
}
for (const [k, v] of Object.entries(res)) console.log(k.padEnd(28), v.map((x) => x.toFixed(2)).join(' '));
await client.close(); await server.stop();
