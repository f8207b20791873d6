// Starts the real `holdfast serve` for a test: free ports (port 0), a private data dir and Unix
// socket, waiting for its ready line. With HOLDFAST_TEST_STORE_URL set (tests run through
// tests/blackbox/run_with_postgres.sh) the server is a scale-out node over that PostgreSQL, in a
// schema of its own, so every suite runs unchanged against both backends.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

export interface Member {
  userId: string;
  role: "member" | "admin" | "owner";
  /** The bearer token; a member with only `certCommonName` signs in by certificate. */
  token?: string;
  /** The common name of the client certificate that is this member. */
  certCommonName?: string;
}

export interface ServerOptions {
  /** Extra holdfast.toml text (the [auth] table is written from `members`). */
  config?: string;
  /** With members, the server runs with credentials instead of local open mode. */
  members?: Member[];
  /** TLS on the TCP and HTTP listeners (PEM files); respUrl and httpUrl are then rediss:// and
   * https:// URLs. */
  tls?: { cert: string; key: string; ca?: string; clientAuth?: "none" | "request" | "require" };
}

export class TestServer {
  respUrl = "";
  httpUrl = "";
  unixUrl = "";
  storeUrl = "";
  private output = "";

  private constructor(
    private readonly child: ChildProcess,
    readonly dir: string,
  ) {}

  static async start(options: ServerOptions = {}): Promise<TestServer> {
    const bin = process.env.HOLDFAST_BIN;
    if (!bin) throw new Error("HOLDFAST_BIN must name the holdfast binary to test");
    const dir = mkdtempSync(join(tmpdir(), "holdfast-js-"));
    const args = ["serve", "--data-dir", dir, "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0", "--unix", join(dir, "holdfast.sock")];
    let config = options.config ?? "";
    if (options.members) {
      const creds = options.members
        .map(
          (m) =>
            `[[member]]\nuserId = "${m.userId}"\nrole = "${m.role}"\n` +
            (m.token !== undefined ? `tokenSha256 = "${sha256(m.token)}"\n` : "") +
            (m.certCommonName !== undefined ? `certCommonName = "${m.certCommonName}"\n` : ""),
        )
        .join("\n");
      writeFileSync(join(dir, "credentials.toml"), creds);
      config += `\n[auth]\ncredentials = "credentials.toml"\n`;
    }
    if (options.tls) {
      args.push("--tls-cert", options.tls.cert, "--tls-key", options.tls.key);
      if (options.tls.ca !== undefined) args.push("--tls-ca", options.tls.ca);
      if (options.tls.clientAuth !== undefined) args.push("--tls-client-auth", options.tls.clientAuth);
    }
    const base = process.env.HOLDFAST_TEST_STORE_URL;
    let storeUrl = "";
    if (base) {
      storeUrl = freshSchema(base);
      args.push("--store", storeUrl);
      // A few connections, not the default 32: opening them is most of a node's start, and a
      // test has a handful of clients (as tests/support/server_process.cc does).
      if (!config.includes("[store]")) config += "\n[store]\npoolSize = 4\n";
    }
    if (config !== "") {
      writeFileSync(join(dir, "holdfast.toml"), config);
      args.push("--config", join(dir, "holdfast.toml"));
    }
    const child = spawn(bin, args, { stdio: ["ignore", "pipe", "pipe"] });
    const server = new TestServer(child, dir);
    server.storeUrl = storeUrl;
    child.stderr!.on("data", (b: Buffer) => (server.output += b.toString()));
    await new Promise<void>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      const timer = setTimeout(() => reject(new Error(`holdfast serve did not become ready:\n${server.output}`)), 60_000);
      child.once("exit", (code) => reject(new Error(`holdfast serve exited with ${code}:\n${server.output}`)));
      lines.on("line", (line) => {
        server.output += line + "\n";
        const resp = /resp=(127\.0\.0\.1:\d+)/.exec(line);
        const http = /http=(127\.0\.0\.1:\d+)/.exec(line);
        if (line.startsWith("holdfast ready") && resp && http) {
          server.respUrl = `${options.tls ? "rediss" : "holdfast"}://${resp[1]}`;
          server.httpUrl = `${options.tls ? "https" : "http"}://${http[1]}`;
          server.unixUrl = `unix://${join(dir, "holdfast.sock")}`;
          clearTimeout(timer);
          resolve();
        }
      });
    });
    return server;
  }

  /** The URL of one transport: "http", "resp" (TCP) or "unix". */
  url(transport: Transport): string {
    return transport === "http" ? this.httpUrl : transport === "resp" ? this.respUrl : this.unixUrl;
  }

  /** SIGTERM (or SIGKILL) and wait for the exit; the data dir stays until cleanup(). */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill(signal);
    await exited;
  }

  async cleanup(): Promise<void> {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

export type Transport = "http" | "resp" | "unix";
export const TRANSPORTS: Transport[] = ["http", "resp", "unix"];

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

let schemas = 0;

// A new, empty schema in the database at `base`, and a URL that makes it the search path.
function freshSchema(base: string): string {
  const schema = `js${process.pid}_${++schemas}`;
  const r = spawnSync("psql", [base, "-v", "ON_ERROR_STOP=1", "-q", "-c", `CREATE SCHEMA ${schema}`], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`cannot create schema ${schema}: ${r.stderr}`);
  return `${base}${base.includes("?") ? "&" : "?"}options=-csearch_path%3D${schema}`;
}
