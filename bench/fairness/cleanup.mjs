import { Redis } from 'ioredis';
import { deleteRedisPrefix } from '@crawler/queue';
const r = new Redis('redis://127.0.0.1:6379');
for (const p of process.argv.slice(2)) await deleteRedisPrefix(r, p);
r.disconnect();
