// Pub/sub through ioredis and node-redis (two majors of each), with each library's own
// subscribe API, in RESP2 and RESP3: messages to a channel and to a pattern arrive, PUBLISH
// counts the subscribers, a script's PUBLISH is delivered as Redis delivers it (lock libraries
// wake their waiters that way), and PUBSUB NUMSUB sees the subscriber.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { HoldfastServer, closeAll, connect, libraries } from './harness.mjs';

let server;
before(async () => {
  server = await HoldfastServer.start();
});
after(async () => {
  await closeAll();
  await server.stop();
});

// Resolves once `got` holds `n` messages; a generous deadline only a hang reaches.
async function received(got, n) {
  const deadline = Date.now() + 60_000;
  while (got.length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return got;
}

const byChannel = (a, b) => `${a.pattern}|${a.channel}|${a.message}`.localeCompare(`${b.pattern}|${b.channel}|${b.message}`);

for (const lib of libraries) {
  const tag = lib.name.replace(/ /g, '');
  describe(lib.name, { timeout: 70_000 }, () => {
    for (const protocol of lib.protocols) {
      test(`RESP${protocol}: subscribe, psubscribe, publish, and PUBLISH from a script`, async () => {
        const sub = await connect(lib, server, { protocol });
        const pub = await connect(lib, server, { protocol });
        const got = [];
        const channel = `${tag}:${protocol}:wake`;
        await sub.subscribe([channel], [`${tag}:${protocol}:*`], (m) => got.push(m));
        assert.deepEqual((await pub.call('PUBSUB', 'NUMSUB', channel)).map(String), [channel, '1']);
        // The channel's subscriber and the pattern's: two receivers.
        assert.equal(Number(await pub.call('PUBLISH', channel, 'released')), 2);
        assert.equal(Number(await pub.call('PUBLISH', `${tag}:${protocol}:other`, 'only the pattern')), 1);
        assert.equal(Number(await pub.call('PUBLISH', 'nobody-listens', 'x')), 0);
        const script = "return redis.call('PUBLISH', KEYS[1], ARGV[1])";
        assert.equal(Number(await pub.call('EVAL', script, 1, channel, 'from a script')), 2);
        await received(got, 5);
        const pattern = `${tag}:${protocol}:*`;
        assert.deepEqual([...got].sort(byChannel), [
          { channel, message: 'from a script' },
          { channel, message: 'released' },
          { pattern, channel, message: 'from a script' },
          { pattern, channel, message: 'released' },
          { pattern, channel: `${tag}:${protocol}:other`, message: 'only the pattern' },
        ].sort(byChannel));
        await sub.close();
        await pub.close();
      });
    }
  });
}
