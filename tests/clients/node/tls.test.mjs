// ioredis and node-redis, two majors of each, over TLS as their documentation configures it
// (ioredis `tls: { ca, cert, key }`, node-redis `socket: { tls: true, ca, cert, key }`): lock
// commands and the Redis idiom work; a client certificate whose common name the credentials
// carry is that caller without a password; an untrusted server is refused.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { HoldfastServer, closeAll, connect, fields, libraries } from './harness.mjs';

let open, secured;
before(async () => {
  [open, secured] = await Promise.all([
    HoldfastServer.start({ tls: true }),
    HoldfastServer.start({ auth: true, tls: true }),
  ]);
});
after(async () => {
  await closeAll();
  await Promise.all([open.stop(), secured.stop()]);
});

for (const lib of libraries) {
  const tag = `${lib.name.replace(/ /g, '')}:tls`;
  describe(lib.name, { timeout: 15000 }, () => {
    test('takes and releases locks over TLS', async () => {
      const c = await connect(lib, open, { tls: { ca: open.tls.ca } });
      assert.equal(await c.call('PING'), 'PONG');
      const hold = fields(await c.call('LOCK.TRY', `${tag}:a`, 'TTL', 30000));
      assert.equal(hold.heldBy, 'user:local');
      assert.equal(await c.call('LOCK.TRY', `${tag}:a`, 'TTL', 30000), null);
      assert.equal(Number(fields(await c.call('LOCK.RELEASE', `${tag}:a`, hold.handle)).released), 1);
      // The Redis idiom, pipelined.
      const [set, again, value] = await c.pipeline([
        ['SET', `${tag}:idiom`, 'token-1', 'NX', 'PX', 30000],
        ['SET', `${tag}:idiom`, 'token-2', 'NX', 'PX', 30000],
        ['GET', `${tag}:idiom`],
      ]);
      assert.equal(set, 'OK');
      assert.equal(again, null);
      assert.equal(value, 'token-1');
      await c.close();
    });

    test('a client certificate signs in as its caller', async () => {
      const c = await connect(lib, secured, { tls: { ca: secured.tls.ca, cert: secured.tls.cert, key: secured.tls.key } });
      const hold = fields(await c.call('LOCK.TRY', `${tag}:carol`, 'TTL', 30000));
      assert.equal(hold.heldBy, 'user:carol');
      await c.close();
      // Without one, a password (the token) is needed, as without TLS.
      const anonymous = await connect(lib, secured, { tls: { ca: secured.tls.ca }, password: 'alice-secret' });
      assert.equal(fields(await anonymous.call('LOCK.TRY', `${tag}:alice`, 'TTL', 30000)).heldBy, 'user:alice');
      await anonymous.close();
    });

    test('refuses a server whose CA it does not trust', async () => {
      await assert.rejects(connect(lib, open, { tls: { ca: open.tls.otherCa }, retry: false }), (e) => {
        assert.match(String(e.message ?? e), /self[- ]signed|unable to (get|verify)|certificate/i);
        return true;
      });
    });
  });
}
