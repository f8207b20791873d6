// Redis lock libraries from npm, used as their documentation shows with only the address
// changed: redlock (5.0.0-beta.2, the release with `using`), redis-semaphore's Mutex and
// @microfleet/ioredis-lock, each over ioredis. Each takes, extends and frees a key; two workers
// of each contend on one key and, inside the critical section, read the fencing token of the
// grant with LOCK.STATUS: sections never overlap and each sees a larger token than the last.
// A grant acknowledged before a kill -9 is still there after the restart.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';

import Redis from 'ioredis';
import Redlock from 'redlock';
import { Mutex } from 'redis-semaphore';
import { createLock } from '@microfleet/ioredis-lock';

import { fields, ioredisSuite } from './harness.mjs';

const suite = ioredisSuite(Redis);
const { client, clients } = suite;

async function status(redis, key) {
  return fields(await redis.call('LOCK.STATUS', key));
}

// Runs `rounds` critical sections in each of two workers; `section(worker, body)` takes the
// lock the library's way, runs body, and frees it. Checks exclusion and fencing.
async function contend(key, rounds, section) {
  const observer = client();
  let inside = 0;
  let lastToken = 0;
  let entered = 0;
  const body = async () => {
    assert.equal(inside, 0, 'two critical sections overlap');
    inside += 1;
    const st = await status(observer, key);
    assert.equal(Number(st.held), 1);
    const token = Number(st.token);
    assert.ok(token > lastToken, `token ${token} is not above the last section's ${lastToken}`);
    lastToken = token;
    await sleep(1);  // give the other worker a chance to barge in, if it could
    inside -= 1;
    entered += 1;
  };
  await Promise.all([0, 1].map(async (w) => {
    for (let i = 0; i < rounds; i += 1) await section(w, body);
  }));
  assert.equal(entered, 2 * rounds);
  assert.equal(Number((await status(observer, key)).held), 0, 'the key is free at the end');
}

describe('redlock', { timeout: 60000 }, () => {
  test('acquire, extend, release and using', async () => {
    const redlock = new Redlock([client()], { retryCount: 0 });
    const lock = await redlock.acquire(['rl:a'], 5000);
    let st = await status(clients[0], 'rl:a');
    assert.equal(st.owner, lock.value);
    assert.ok(Number(st.token) > 0);
    await assert.rejects(redlock.acquire(['rl:a'], 5000), /ExecutionError|quorum/);
    const extended = await lock.extend(20000);
    assert.ok(Number(await clients[0].pttl('rl:a')) > 5000);
    await extended.release();
    assert.equal(await clients[0].exists('rl:a'), 0);
    const out = await redlock.using(['rl:b', 'rl:c'], 5000, async (signal) => {
      assert.equal(signal.aborted, false);
      st = await status(clients[0], 'rl:c');
      return Number(st.held);
    });
    assert.equal(out, 1);
    assert.equal(await clients[0].exists('rl:b', 'rl:c'), 0);
  });

  test('two workers never overlap', async () => {
    const locks = [0, 1].map(() => new Redlock([client()], { retryCount: 200, retryDelay: 5, retryJitter: 5 }));
    await contend('rl:contended', 25, async (w, body) => {
      const lock = await locks[w].acquire(['rl:contended'], 5000);
      try {
        await body();
      } finally {
        await lock.release();
      }
    });
  });
});

describe('redis-semaphore Mutex', { timeout: 60000 }, () => {
  test('acquire, refresh, release', async () => {
    const redis = client();
    const mutex = new Mutex(redis, 'sem:a', { lockTimeout: 1000, refreshInterval: 100 });
    await mutex.acquire();
    assert.equal(mutex.isAcquired, true);
    const st = await status(redis, 'mutex:sem:a');
    assert.equal(st.owner, mutex.identifier);
    // Refreshes keep the lease alive well past lockTimeout.
    await sleep(1500);
    assert.equal(mutex.isAcquired, true);
    assert.ok(Number(await redis.pttl('mutex:sem:a')) > 0);
    const other = new Mutex(client(), 'sem:a', { lockTimeout: 1000, acquireAttemptsLimit: 1 });
    assert.equal(await other.tryAcquire(), false);
    await mutex.release();
    assert.equal(await redis.exists('mutex:sem:a'), 0);
    assert.equal(await other.tryAcquire(), true);
    await other.release();
  });

  test('two workers never overlap', async () => {
    const redis = [client(), client()];
    await contend('mutex:sem:contended', 25, async (w, body) => {
      const mutex = new Mutex(redis[w], 'sem:contended', { lockTimeout: 5000, retryInterval: 5, acquireTimeout: 30000 });
      await mutex.acquire();
      try {
        await body();
      } finally {
        await mutex.release();
      }
    });
  });
});

describe('@microfleet/ioredis-lock', { timeout: 60000 }, () => {
  test('acquire, extend, release', async () => {
    const redis = client();
    const lock = createLock(redis, { timeout: 5000, retries: 0, delay: 10 });
    await lock.acquire('ml:a');
    assert.equal(Number((await status(redis, 'ml:a')).held), 1);
    await assert.rejects(createLock(client(), { timeout: 5000, retries: 0 }).acquire('ml:a'));
    await lock.extend(20000);
    assert.ok(Number(await redis.pttl('ml:a')) > 5000);
    await lock.release();
    assert.equal(await redis.exists('ml:a'), 0);
  });

  test('two workers never overlap', async () => {
    const redis = [client(), client()];
    await contend('ml:contended', 25, async (w, body) => {
      const lock = createLock(redis[w], { timeout: 5000, retries: 2000, delay: 5 });
      await lock.acquire('ml:contended');
      try {
        await body();
      } finally {
        await lock.release();
      }
    });
  });
});

describe('after a kill -9', { timeout: 60000 }, () => {
  test('an acknowledged grant is still held, and its holder still frees it', async () => {
    const redis = client();
    const redlock = new Redlock([redis], { retryCount: 0 });
    const lock = await redlock.acquire(['crash:a'], 60000);
    const before = await status(redis, 'crash:a');
    await suite.server.kill9();
    const after = await status(redis, 'crash:a');  // ioredis reconnects and resends
    assert.equal(Number(after.held), 1);
    assert.equal(after.owner, lock.value);
    assert.equal(after.token, before.token);
    await assert.rejects(new Redlock([client()], { retryCount: 0 }).acquire(['crash:a'], 1000));
    await lock.release();
    assert.equal(await redis.exists('crash:a'), 0);
  });
});
