// One RESP connection to a Holdfast server (TCP or a Unix socket), in Node.
//
//  1. open(): connect within the connect timeout, then send AUTH (when there is a token) and
//     HELLO 3 in one write; a peer whose HELLO does not name itself "holdfast" is refused.
//  2. call(): commands are pipelined; replies come back in order and settle the oldest
//     waiting call. Each call has a deadline; a call that passes it breaks the connection (the
//     replies of the calls behind it could no longer be told apart).
//  3. When the connection breaks, every waiting call fails with ConnectionError. The socket
//     keeps the process alive only while a call waits, so a script that forgets close() ends.
import { Buffer } from "node:buffer";
import * as net from "node:net";
import * as tls from "node:tls";

import { ConnectionError, ProtocolError, errorFromWire } from "../errors.js";
import type { TlsOptions } from "../tls.js";
import { describeNode, type RespNode } from "../url.js";
import { NEED_MORE, ReplyDecoder, RespErrorReply, asRecord, encodeCommand, type RespValue } from "./codec.js";
import { parseErrorLine } from "./error_line.js";

interface Waiting {
  resolve(value: RespValue): void;
  reject(error: Error): void;
  timer: ReturnType<typeof setTimeout>;
}

export interface Credentials {
  user?: string;
  token?: string;
}

export class RespConnection {
  private readonly decoder = new ReplyDecoder();
  private readonly waiting: Waiting[] = [];
  private broken: ConnectionError | ProtocolError | null = null;

  private constructor(
    private readonly socket: net.Socket,
    readonly name: string,
  ) {
    socket.setNoDelay(true);
    socket.on("data", (chunk: Buffer) => this.onData(chunk));
    socket.on("error", (e) => this.fail(new ConnectionError(`connection to ${name} failed: ${e.message}`, { cause: e })));
    socket.on("close", () => this.fail(new ConnectionError(`connection to ${name} closed`)));
    socket.unref();
  }

  /** Connects (over TLS with `tlsOptions`: rediss://) and says hello. Throws ConnectionError,
   * UnauthenticatedError or ProtocolError. */
  static async open(node: RespNode, credentials: Credentials, connectTimeoutMs: number, tlsOptions?: TlsOptions): Promise<RespConnection> {
    const name = describeNode(node);
    const secure = tlsOptions !== undefined && node.kind === "tcp";
    const socket = await new Promise<net.Socket>((resolve, reject) => {
      const s =
        node.kind === "unix"
          ? net.connect({ path: node.path })
          : secure
            ? tls.connect({
                host: node.host,
                port: node.port,
                // Node takes any bytes where its types say Buffer.
                ...(tlsOptions as tls.ConnectionOptions),
                // The name the certificate must carry; an IP address is checked as one, not sent.
                ...(net.isIP(node.host) === 0 && { servername: node.host }),
              })
            : net.connect({ host: node.host, port: node.port });
      let reached = false;
      s.once("connect", () => {
        reached = true;
      });
      const timer = setTimeout(() => {
        s.destroy();
        reject(new ConnectionError(`cannot reach ${name}: no connection within ${connectTimeoutMs} ms`));
      }, connectTimeoutMs);
      s.once(secure ? "secureConnect" : "connect", () => {
        clearTimeout(timer);
        s.removeAllListeners("error");
        resolve(s);
      });
      s.once("error", (e) => {
        clearTimeout(timer);
        const why = reached ? `TLS handshake with ${name} failed` : `cannot reach ${name}`;
        reject(new ConnectionError(`${why}: ${e.message}`, { cause: e }));
      });
    });
    const conn = new RespConnection(socket, name);
    try {
      // AUTH and HELLO leave in one write; an AUTH refusal is the error worth reporting.
      const auth =
        credentials.token === undefined
          ? null
          : conn.call(
              credentials.user !== undefined ? ["AUTH", credentials.user, credentials.token] : ["AUTH", credentials.token],
              connectTimeoutMs,
            );
      const hello = conn.call(["HELLO", "3"], connectTimeoutMs);
      if (auth !== null) {
        hello.catch(() => {});
        RespConnection.check(await auth, {});
      }
      const reply = asRecord(RespConnection.check(await hello, {}));
      if (reply === null || reply.server !== "holdfast")
        throw new ProtocolError(`${name} is not a Holdfast server (its HELLO did not name holdfast)`);
    } catch (e) {
      conn.close();
      throw e;
    }
    return conn;
  }

  /** Turns an error reply into the matching HoldfastError; other replies pass through. */
  static check(reply: RespValue, context: { key?: string; timeoutMs?: number }): RespValue {
    if (reply instanceof RespErrorReply) {
      const { code, message, details } = parseErrorLine(reply.line);
      throw errorFromWire(code, message, details, context);
    }
    return reply;
  }

  get usable(): boolean {
    return this.broken === null;
  }

  get busy(): boolean {
    return this.waiting.length > 0;
  }

  /** Sends one command; resolves with its reply (an error reply is a value: see check()). */
  call(args: readonly string[], timeoutMs: number): Promise<RespValue> {
    if (this.broken) return Promise.reject(this.broken);
    return new Promise<RespValue>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          this.fail(
            new ConnectionError(`no answer from ${this.name} within ${timeoutMs} ms; the call may or may not have taken effect`),
          ),
        timeoutMs,
      );
      this.waiting.push({ resolve, reject, timer });
      if (this.waiting.length === 1) this.socket.ref();
      // Commands written in the same tick leave in one write (pipelining costs one syscall).
      if (!this.corked) {
        this.corked = true;
        this.socket.cork();
        queueMicrotask(() => {
          this.corked = false;
          this.socket.uncork();
        });
      }
      this.socket.write(encodeCommand(args));
    });
  }

  private corked = false;

  close(): void {
    this.fail(new ConnectionError("the client is closed"));
  }

  private onData(chunk: Buffer): void {
    this.decoder.push(chunk);
    for (;;) {
      let reply: RespValue | typeof NEED_MORE;
      try {
        reply = this.decoder.read();
      } catch (e) {
        this.fail(new ProtocolError(`${this.name} sent bytes that are not RESP: ${(e as Error).message}`));
        return;
      }
      if (reply === NEED_MORE) return;
      const entry = this.waiting.shift();
      if (entry === undefined) {
        this.fail(new ConnectionError(`${this.name} sent a reply nobody asked for`));
        return;
      }
      clearTimeout(entry.timer);
      if (this.waiting.length === 0) this.socket.unref();
      entry.resolve(reply);
    }
  }

  private fail(error: ConnectionError | ProtocolError): void {
    if (this.broken === null) this.broken = error;
    this.socket.destroy();
    for (const entry of this.waiting.splice(0)) {
      clearTimeout(entry.timer);
      entry.reject(
        error.message === "the client is closed" || error instanceof ProtocolError
          ? error
          : new ConnectionError(`${error.message} while a call waited for its answer; it may or may not have taken effect`, {
              cause: error,
            }),
      );
    }
  }
}
