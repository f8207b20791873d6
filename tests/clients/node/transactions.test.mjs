// multi() in ioredis and node-redis (two majors of each) wraps commands in MULTI/EXEC.
// These fail until the server has MULTI/EXEC/DISCARD.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { HoldfastServer, closeAll, connect, fields, libraries } from './harness.mjs';

let server;
before(async () => {
  server = await HoldfastServer.start();
});
after(async () => {
  await closeAll();
  await server.stop();
});

for (const lib of libraries) {
  const tag = lib.name.replace(/ /g, '');
  describe(`${lib.name} transactions`, { timeout: 15000 }, () => {
    for (const protocol of lib.protocols) {
      test(`RESP${protocol}: multi() runs its commands and hands back every handle`, async () => {
        const c = await connect(lib, server, { protocol });
        const [a, b] = await c.multi([
          ['LOCK.TRY', `${tag}:tx${protocol}:a`, 'TTL', 60000],
          ['LOCK.TRY', `${tag}:tx${protocol}:b`, 'TTL', 60000],
        ]);
        for (const [hold, key] of [[a, 'a'], [b, 'b']]) {
          const h = fields(hold);
          assert.equal(h.key, `${tag}:tx${protocol}:${key}`);
          const released = fields(await c.call('LOCK.RELEASE', h.key, h.handle));
          assert.equal(Number(released.released), 1);
        }
        await c.close();
      });
    }

    test('a command refused while queuing aborts the transaction and takes nothing', async () => {
      const c = await connect(lib, server);
      // The server answers the refused command's error, then EXECABORT for EXEC (as Redis
      // does); ioredis rejects with EXECABORT, node-redis with the first error it read.
      await assert.rejects(
        c.multi([
          ['LOCK.TRY', `${tag}:tx:aborted`, 'TTL', 60000],
          ['LOCK.RELEASE', `${tag}:tx:aborted`],  // wrong number of arguments
        ]),
        /EXECABORT|wrong number of arguments for 'LOCK\.RELEASE'/,
      );
      assert.equal(Number(fields(await c.call('LOCK.STATUS', `${tag}:tx:aborted`)).held), 0);
      await c.close();
    });
  });
}
