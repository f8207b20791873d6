// A Holdfast server for a test, started through the serve_for_clients helper (its path in
// HOLDFAST_SERVE_FOR_CLIENTS; ctest sets it), and the four client libraries behind one small
// interface so every case runs with each of them.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { once } from 'node:events';
import { after, before } from 'node:test';

import IORedis5 from 'ioredis-5';
import IORedis6 from 'ioredis-6';
import { createClient as createClient5 } from 'redis-5';
import { createClient as createClient6 } from 'redis-6';

export class HoldfastServer {
  // tls: the TCP port speaks TLS only; server.tls then names the PEM files {ca, cert, key,
  // otherCa} (cert and key: the client certificate of carol.example, a member with --auth).
  static async start({ auth = false, tls = false } = {}) {
    const server = new HoldfastServer();
    const helper = process.env.HOLDFAST_SERVE_FOR_CLIENTS;
    if (!helper) throw new Error('HOLDFAST_SERVE_FOR_CLIENTS is not set');
    const flags = [...(auth ? ['--auth'] : []), ...(tls ? ['--tls'] : [])];
    server.proc = spawn(helper, flags, { stdio: ['pipe', 'pipe', 'inherit'] });
    server.lines = createInterface({ input: server.proc.stdout })[Symbol.asyncIterator]();
    const first = await server.lines.next();
    if (first.done) throw new Error('serve_for_clients did not start a server');
    Object.assign(server, JSON.parse(first.value));  // port, unix, store
    return server;
  }

  // Stops the server and starts it again on the same port and data.
  async restart() {
    this.proc.stdin.write('restart\n');
    const line = await this.lines.next();
    if (line.done || line.value !== 'restarted') throw new Error('the server did not restart');
  }

  // Kills the server with SIGKILL and starts it again on the same port and data.
  async kill9() {
    this.proc.stdin.write('kill9\n');
    const line = await this.lines.next();
    if (line.done || line.value !== 'restarted') throw new Error('the server did not restart');
  }

  async stop() {
    this.proc.stdin.end();
    if (this.proc.exitCode === null) await once(this.proc, 'exit');
  }
}

// A reply with fields as a plain object, whatever the protocol and the library made of it:
// RESP2 flat [name, value, ...] arrays, RESP3 maps as Map or as object.
export function fields(reply) {
  if (reply instanceof Map) return Object.fromEntries(reply);
  if (Array.isArray(reply)) {
    const out = {};
    for (let i = 0; i < reply.length; i += 2) out[String(reply[i])] = reply[i + 1];
    return out;
  }
  return reply;
}

// ioredis 5 speaks RESP2 only; ioredis 6 and node-redis 5 and 6 both protocols.
export const libraries = [
  { name: 'ioredis 5', kind: 'ioredis', Redis: IORedis5, protocols: [2], defaultProtocol: 2 },
  { name: 'ioredis 6', kind: 'ioredis', Redis: IORedis6, protocols: [2, 3], defaultProtocol: 3 },
  { name: 'node-redis 5', kind: 'node-redis', createClient: createClient5, protocols: [2, 3], defaultProtocol: 2 },
  { name: 'node-redis 6', kind: 'node-redis', createClient: createClient6, protocols: [2, 3], defaultProtocol: 3 },
];

// Every client connect() made, so a test that fails before closing its clients does not keep
// the process alive: closeAll() in an after() hook drops what is left.
const open = new Set();

export async function closeAll() {
  // A client that never connected, or already closed, may throw when dropped: that is fine.
  await Promise.allSettled([...open].map(async (drop) => drop()));
  open.clear();
}

// Connects with the library's defaults plus `options`: protocol (2|3), password, username,
// name, unix (connect to the Unix socket), retry (false: fail instead of reconnecting), tls
// ({ca, cert?, key?}: PEM file names, read and handed over as each library takes them: ioredis
// `tls`, node-redis `socket.tls`).
// Resolves once the library says the connection is ready.
export async function connect(lib, server, options = {}) {
  return lib.kind === 'ioredis' ? connectIORedis(lib, server, options) : connectNodeRedis(lib, server, options);
}

// {ca, cert, key} file names -> their PEM contents, as Node's tls.connect takes them.
function pem(tls) {
  return Object.fromEntries(Object.entries(tls).map(([name, file]) => [name, readFileSync(file)]));
}

async function connectIORedis(lib, server, o) {
  const config = o.unix ? { path: server.unix } : { host: '127.0.0.1', port: server.port };
  if (o.tls !== undefined) config.tls = pem(o.tls);
  if (o.protocol !== undefined) config.protocol = o.protocol;
  if (o.password !== undefined) config.password = o.password;
  if (o.username !== undefined) config.username = o.username;
  if (o.name !== undefined) config.connectionName = o.name;
  if (o.retry === false) Object.assign(config, { retryStrategy: () => null, maxRetriesPerRequest: 0 });
  const redis = new lib.Redis(config);
  const drop = () => redis.disconnect();
  open.add(drop);
  redis.on('error', () => {});  // reported through the failing command or the ready wait
  await new Promise((resolve, reject) => {
    redis.once('ready', resolve);
    redis.once('end', () => reject(redis.lastError ?? new Error('connection ended')));
    redis.once('error', (e) => { redis.lastError = e; if (o.retry === false) reject(e); });
  });
  return {
    library: lib,
    call: (...args) => redis.call(...args),
    pipeline: async (commands) => unwrap(await commands.reduce((p, c) => p.call(...c), redis.pipeline()).exec()),
    multi: async (commands) => unwrap(await commands.reduce((p, c) => p.call(...c), redis.multi()).exec()),
    // Subscribes with the library's own API; onMessage({ pattern?, channel, message }).
    subscribe: async (channels, patterns, onMessage) => {
      redis.on('message', (channel, message) => onMessage({ channel, message }));
      redis.on('pmessage', (pattern, channel, message) => onMessage({ pattern, channel, message }));
      if (channels.length > 0) await redis.subscribe(...channels);
      if (patterns.length > 0) await redis.psubscribe(...patterns);
    },
    close: () => {
      open.delete(drop);
      return redis.quit();
    },
  };
}

// ioredis answers a pipeline as [[error, reply], ...].
function unwrap(results) {
  return results.map(([error, reply]) => {
    if (error) throw error;
    return reply;
  });
}

async function connectNodeRedis(lib, server, o) {
  const config = { socket: o.unix ? { path: server.unix } : { host: '127.0.0.1', port: server.port } };
  if (o.tls !== undefined) Object.assign(config.socket, { tls: true, ...pem(o.tls) });
  if (o.protocol !== undefined) config.RESP = o.protocol;
  if (o.password !== undefined) config.password = o.password;
  if (o.username !== undefined) config.username = o.username;
  if (o.name !== undefined) config.name = o.name;
  if (o.retry === false) config.socket.reconnectStrategy = false;
  const client = lib.createClient(config);
  const drop = () => client.destroy();
  open.add(drop);
  client.on('error', () => {});  // reported through connect() or the failing command
  await client.connect();
  const asArgs = (c) => c.map(String);
  return {
    library: lib,
    call: (...args) => client.sendCommand(asArgs(args)),
    pipeline: (commands) => commands.reduce((m, c) => m.addCommand(asArgs(c)), client.multi()).execAsPipeline(),
    multi: (commands) => commands.reduce((m, c) => m.addCommand(asArgs(c)), client.multi()).exec(),
    subscribe: async (channels, patterns, onMessage) => {
      for (const channel of channels) {
        await client.subscribe(channel, (message, ch) => onMessage({ channel: ch, message }));
      }
      for (const pattern of patterns) {
        await client.pSubscribe(pattern, (message, ch) => onMessage({ pattern, channel: ch, message }));
      }
    },
    close: () => {
      open.delete(drop);
      return client.close();
    },
  };
}

// For a test file of lock libraries over ioredis (the Redis class they take, passed in): one
// server for the file, started before its tests, and suite.client() for each ioredis
// connection to it; after the tests, every client quits and the server stops.
export function ioredisSuite(Redis) {
  const suite = { server: undefined, clients: [] };
  suite.client = () => {
    const redis = new Redis({ host: '127.0.0.1', port: suite.server.port, maxRetriesPerRequest: 20 });
    redis.on('error', () => {});  // reconnects after the server restarts; commands report errors
    suite.clients.push(redis);
    return redis;
  };
  before(async () => {
    suite.server = await HoldfastServer.start();
  });
  after(async () => {
    await Promise.allSettled(suite.clients.map((c) => c.quit()));
    await suite.server.stop();
  });
  return suite;
}
