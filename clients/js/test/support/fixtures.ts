// Hooks that test files share: one server per file, and clients that are closed after their
// describe block.
import { after, before } from "node:test";

import { createClient, type HoldfastClient } from "@holdfast/client";

import { TestServer, type ServerOptions, type Transport } from "./server.js";

/** One server for the whole file: started (then `setUp`) before its first test, removed after
 * its last. */
export function serverForFile(options: ServerOptions = {}, setUp?: (server: TestServer) => Promise<void>): () => TestServer {
  let server: TestServer | undefined;
  before(async () => {
    server = await TestServer.start(options);
    await setUp?.(server);
  });
  after(async () => {
    await server?.cleanup();
  });
  return () => {
    if (server === undefined) throw new Error("the file's server starts in its before hook");
    return server;
  };
}

/** A maker of clients over `transport`; the ones it made are closed after the block. */
export function clientMaker(server: () => TestServer, transport: Transport): () => HoldfastClient {
  const made: HoldfastClient[] = [];
  after(async () => {
    await Promise.all(made.map((c) => c.close()));
  });
  return () => {
    const client = createClient({ url: server().url(transport) });
    made.push(client);
    return client;
  };
}
