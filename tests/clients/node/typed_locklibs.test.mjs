// Redis lock libraries from npm that keep their locks in typed values, used as their
// documentation shows with only the address changed: redis-semaphore's Semaphore,
// MultiSemaphore and RedlockSemaphore (5.8.0: holders in a sorted set, taken and refreshed by
// scripts, given back with ZREM) over ioredis, and simple-redis-mutex (3.0.0: SET NX, an INCR
// counter for fencing tokens, PUBLISH and SUBSCRIBE to wake waiters) over node-redis. Workers
// contend on one semaphore and never hold more permits at once than it has; holders survive a
// kill -9; simple-redis-mutex's fencing tokens only grow.
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

import Redis from 'ioredis';
import { createClient } from 'redis-5';
import { MultiSemaphore, RedlockSemaphore, Semaphore } from 'redis-semaphore';
import { lock as srmLock, tryLock as srmTryLock } from 'simple-redis-mutex';

import { ioredisSuite } from './harness.mjs';

const suite = ioredisSuite(Redis);
const { client } = suite;

// Runs `rounds` sections in each of `workers` workers; `section(worker, body)` takes permits
// the library's way, runs body, and gives them back. At no moment do the sections inside hold
// more than `limit` permits (each takes `take`).
async function contend(workers, rounds, limit, take, section) {
  let inside = 0;
  let most = 0;
  let entered = 0;
  const body = async () => {
    inside += take;
    most = Math.max(most, inside);
    assert.ok(inside <= limit, `${inside} permits held at once, the semaphore has ${limit}`);
    await sleep(2);  // give the other workers a chance to barge in, if they could
    inside -= take;
    entered += 1;
  };
  await Promise.all([...Array(workers).keys()].map(async (w) => {
    for (let i = 0; i < rounds; i += 1) await section(w, body);
  }));
  assert.equal(entered, workers * rounds);
  return most;
}

describe('redis-semaphore Semaphore', { timeout: 60000 }, () => {
  test('acquire, refresh, release: the holders are a sorted set', async () => {
    const redis = client();
    const a = new Semaphore(redis, 'sem:a', 2, { lockTimeout: 1000, refreshInterval: 100 });
    const b = new Semaphore(client(), 'sem:a', 2, { lockTimeout: 1000 });
    await a.acquire();
    await b.acquire();
    assert.equal(await redis.type('semaphore:sem:a'), 'zset');
    assert.deepEqual((await redis.zrange('semaphore:sem:a', 0, -1)).sort(), [a.identifier, b.identifier].sort());
    const c = new Semaphore(client(), 'sem:a', 2, { lockTimeout: 1000, acquireAttemptsLimit: 1 });
    assert.equal(await c.tryAcquire(), false);
    await b.release();
    // a's refreshes keep it past lockTimeout; c gets b's permit.
    await sleep(1500);
    assert.equal(a.isAcquired, true);
    assert.ok(Number(await redis.zscore('semaphore:sem:a', a.identifier)) > 0);
    assert.equal(await c.tryAcquire(), true);
    await Promise.all([a.release(), c.release()]);
    assert.equal(await redis.exists('semaphore:sem:a'), 0);
  });

  test('four workers on three permits never hold more than three', async () => {
    const redis = [0, 1, 2, 3].map(() => client());
    const most = await contend(4, 15, 3, 1, async (w, body) => {
      const s = new Semaphore(redis[w], 'sem:contended', 3, { lockTimeout: 5000, retryInterval: 5, acquireTimeout: 30000 });
      await s.acquire();
      try {
        await body();
      } finally {
        await s.release();
      }
    });
    assert.ok(most >= 2, 'the workers should have shared the permits at least once');
  });
});

describe('redis-semaphore MultiSemaphore', { timeout: 60000 }, () => {
  test('a holder takes several permits and gives them all back', async () => {
    const redis = client();
    const big = new MultiSemaphore(redis, 'multi:a', 5, 3, { lockTimeout: 5000 });
    await big.acquire();
    assert.equal(await redis.zcard('semaphore:multi:a'), 3);
    const other = new MultiSemaphore(client(), 'multi:a', 5, 3, { lockTimeout: 5000, acquireAttemptsLimit: 1 });
    assert.equal(await other.tryAcquire(), false);
    const small = new MultiSemaphore(client(), 'multi:a', 5, 2, { lockTimeout: 5000, acquireAttemptsLimit: 1 });
    assert.equal(await small.tryAcquire(), true);
    await big.release();
    assert.equal(await redis.zcard('semaphore:multi:a'), 2);
    await small.release();
    assert.equal(await redis.exists('semaphore:multi:a'), 0);
  });

  test('workers taking two of five permits never hold more than five', async () => {
    const redis = [0, 1, 2, 3].map(() => client());
    await contend(4, 10, 5, 2, async (w, body) => {
      const s = new MultiSemaphore(redis[w], 'multi:contended', 5, 2, { lockTimeout: 5000, retryInterval: 5, acquireTimeout: 30000 });
      await s.acquire();
      try {
        await body();
      } finally {
        await s.release();
      }
    });
  });
});

describe('redis-semaphore RedlockSemaphore', { timeout: 60000 }, () => {
  test('one server as the whole quorum', async () => {
    const redis = client();
    const a = new RedlockSemaphore([redis], 'rsem:a', 1, { lockTimeout: 5000, acquireAttemptsLimit: 1 });
    assert.equal(await a.tryAcquire(), true);
    const b = new RedlockSemaphore([client()], 'rsem:a', 1, { lockTimeout: 5000, acquireAttemptsLimit: 1 });
    assert.equal(await b.tryAcquire(), false);
    await a.release();
    assert.equal(await b.tryAcquire(), true);
    await b.release();
  });

  test('two workers on one permit never overlap', async () => {
    const redis = [client(), client()];
    await contend(2, 15, 1, 1, async (w, body) => {
      const s = new RedlockSemaphore([redis[w]], 'rsem:contended', 1, { lockTimeout: 5000, retryInterval: 5, acquireTimeout: 30000 });
      await s.acquire();
      try {
        await body();
      } finally {
        await s.release();
      }
    });
  });
});

describe('after a kill -9', { timeout: 60000 }, () => {
  test('a semaphore holder acknowledged before it is still a holder', async () => {
    const redis = client();
    const s = new Semaphore(redis, 'crash:sem', 1, { lockTimeout: 60000, refreshInterval: 0 });
    await s.acquire();
    await suite.server.kill9();
    assert.deepEqual(await redis.zrange('semaphore:crash:sem', 0, -1), [s.identifier]);
    const other = new Semaphore(client(), 'crash:sem', 1, { lockTimeout: 60000, acquireAttemptsLimit: 1 });
    assert.equal(await other.tryAcquire(), false);
    await s.release();
    assert.equal(await other.tryAcquire(), true);
    await other.release();
  });
});

// simple-redis-mutex subscribes to a channel before its first SET NX and publishes from its
// release script.
describe('simple-redis-mutex', { timeout: 60000 }, () => {
  const redisClients = [];
  async function nodeRedis() {
    const c = createClient({ socket: { host: '127.0.0.1', port: suite.server.port } });
    c.on('error', () => {});
    await c.connect();
    redisClients.push(c);
    return c;
  }
  after(async () => {
    await Promise.allSettled(redisClients.map((c) => c.close()));
  });
  test('tryLock, fencing tokens that only grow, release', async () => {
    const redis = await nodeRedis();
    const [got, release] = await srmTryLock(redis, 'srm:a', { timeout: 5000 });
    assert.equal(got, true);
    const [again] = await srmTryLock(await nodeRedis(), 'srm:a', { timeout: 5000 });
    assert.equal(again, false);
    const first = release.fencingToken;
    await release();
    const [got2, release2] = await srmTryLock(redis, 'srm:a', { timeout: 5000 });
    assert.equal(got2, true);
    assert.ok(release2.fencingToken > first);
    await release2();
    assert.equal(await redis.exists('@simple-redis-mutex:lock-srm:a'), 0);
  });

  test('blocking lock() is woken by the release, and sections never overlap', async () => {
    const redis = [await nodeRedis(), await nodeRedis()];
    let last = 0;
    await contend(2, 10, 1, 1, async (w, body) => {
      const release = await srmLock(redis[w], 'srm:contended', { timeout: 5000, pollingInterval: 1000, failAfter: 30000 });
      try {
        assert.ok(release.fencingToken > last, 'fencing tokens only grow');
        last = release.fencingToken;
        await body();
      } finally {
        await release();
      }
    });
  });
});
