// ioredis and node-redis, two majors of each, are Holdfast clients with their default options:
// RESP2 and RESP3, passwords with and without a user, connection names, pipelines, the Unix
// socket and reconnecting after a server restart. Transactions are in transactions.test.mjs.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';

import { HoldfastServer, closeAll, connect, fields, libraries } from './harness.mjs';

let open, secured;
before(async () => {
  [open, secured] = await Promise.all([HoldfastServer.start(), HoldfastServer.start({ auth: true })]);
});
after(async () => {
  await closeAll();
  await Promise.all([open.stop(), secured.stop()]);
});

// The connection's own CLIENT INFO line as an object (id=7 name=x ... -> {id: '7', name: 'x'}).
async function clientInfo(c) {
  const line = String(await c.call('CLIENT', 'INFO')).trim();
  return Object.fromEntries(line.split(' ').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
}

for (const lib of libraries) {
  const tag = lib.name.replace(/ /g, '');  // keys of one library never meet another's
  describe(lib.name, { timeout: 15000 }, () => {
    test('connects with default options and takes and releases a lock', async () => {
      const c = await connect(lib, open);
      assert.equal(await c.call('PING'), 'PONG');
      const hold = fields(await c.call('LOCK.TRY', `${tag}:default`, 'TTL', 60000));
      assert.equal(hold.key, `${tag}:default`);
      assert.equal(hold.heldBy, 'user:local');
      assert.equal(await c.call('LOCK.TRY', `${tag}:default`, 'TTL', 60000), null);
      const released = fields(await c.call('LOCK.RELEASE', `${tag}:default`, hold.handle));
      assert.equal(Number(released.released), 1);
      const me = await clientInfo(c);
      assert.equal(me.resp, String(lib.defaultProtocol));
      assert.match(me['lib-name'], lib.kind === 'ioredis' ? /^ioredis/ : /^node-redis/);
      await c.close();
    });

    for (const protocol of lib.protocols) {
      test(`RESP${protocol}: replies with fields and errors with their code`, async () => {
        const c = await connect(lib, open, { protocol });
        assert.equal((await clientInfo(c)).resp, String(protocol));
        await c.call('LOCK.TRY', `${tag}:resp${protocol}`, 'TTL', 60000, 'OWNER', 'run-1');
        const status = fields(await c.call('LOCK.STATUS', `${tag}:resp${protocol}`));
        assert.equal(Number(status.held), 1);
        assert.equal(status.owner, 'run-1');
        await assert.rejects(c.call('LOCK.ACQUIRE', `${tag}:resp${protocol}`, 'TTL', 1000, 'TIMEOUT', 50), (e) => {
          assert.match(e.message, /^LOCK_TIMEOUT .*timeoutMs=50/);
          return true;
        });
        const info = String(await c.call('INFO', 'persistence'));
        assert.match(info, /\r\nloading:0\r\n/);
        await c.close();
      });
    }

    test('a connection name shows in CLIENT GETNAME and CLIENT LIST', async () => {
      const name = `${tag}-worker`;
      const c = await connect(lib, open, { name });
      assert.equal(await c.call('CLIENT', 'GETNAME'), name);
      const list = String(await c.call('CLIENT', 'LIST'));
      assert.equal(list.split('\n').filter((l) => l.includes(` name=${name} `)).length, 1, list);
      await c.close();
    });

    test('pipelines answer in order', async () => {
      const c = await connect(lib, open);
      const [hold, status, pong] = await c.pipeline([
        ['LOCK.TRY', `${tag}:pipe`, 'TTL', 60000],
        ['LOCK.STATUS', `${tag}:pipe`],
        ['PING'],
      ]);
      assert.equal(fields(hold).key, `${tag}:pipe`);
      assert.equal(Number(fields(status).held), 1);
      assert.equal(pong, 'PONG');
      await c.close();
    });

    test('the Unix socket', async () => {
      const c = await connect(lib, open, { unix: true });
      assert.equal(fields(await c.call('LOCK.TRY', `${tag}:unix`, 'TTL', 60000)).key, `${tag}:unix`);
      assert.match((await clientInfo(c)).addr, /holdfast\.sock:0$/);
      await c.close();
    });

    test('password only, and user default with the password', async () => {
      for (const options of [{ password: 'alice-secret' }, { username: 'default', password: 'alice-secret' }]) {
        const c = await connect(lib, secured, options);
        assert.equal(fields(await c.call('LOCK.TRY', `${tag}:pw:${options.username}`, 'TTL', 60000)).heldBy, 'user:alice');
        await c.close();
      }
    });

    test('user and password, over each protocol', async () => {
      for (const protocol of lib.protocols) {
        const c = await connect(lib, secured, { username: 'bob', password: 'bob-secret', protocol });
        assert.equal(fields(await c.call('LOCK.TRY', `${tag}:bob:${protocol}`, 'TTL', 60000)).heldBy, 'user:bob');
        await c.close();
      }
    });

    test('a wrong password is refused with WRONGPASS', async () => {
      await assert.rejects(
        (async () => {
          const c = await connect(lib, secured, { password: 'nope', retry: false });
          await c.call('LOCK.STATUS', 'k');
        })(),
        (e) => {
          assert.match(String(e.message), /WRONGPASS/);
          return true;
        },
      );
    });

    test('a command before AUTH is refused with NOAUTH', async () => {
      // ioredis's ready check sends INFO, which is refused before AUTH (as by Redis): the
      // connection itself fails. node-redis connects and the command fails.
      await assert.rejects(
        (async () => {
          const c = await connect(lib, secured, { protocol: 2, retry: false });
          await c.call('LOCK.STATUS', 'k');
        })(),
        /NOAUTH/,
      );
    });

    test('reconnects after a server restart', async () => {
      const c = await connect(lib, open);
      const hold = fields(await c.call('LOCK.TRY', `${tag}:restart`, 'TTL', 60000));
      await open.restart();
      // The library notices the closed connection and connects again; the command waits for it.
      let status;
      for (let attempt = 0; attempt < 50 && status === undefined; attempt++) {
        try {
          status = fields(await c.call('LOCK.STATUS', `${tag}:restart`));
        } catch (e) {
          // A command in flight when the socket closed fails; the next one goes out again.
          if (!/closed|ECONNRESET|ECONNREFUSED|Socket|Connection/i.test(e.message)) throw e;
        }
      }
      assert.equal(Number(status.held), 1, 'a lease-scoped hold survives the restart');
      assert.equal(Number(status.token), Number(hold.token));
      await c.close();
    });
  });
}
