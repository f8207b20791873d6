// Starts the real `holdfast serve` for the browser test on ports of its own (kept across a
// restart, so the page can come back to the same origin), with a private data dir. With
// HOLDFAST_TEST_STORE_URL set (tests/blackbox/run_with_postgres.sh) it is a node over that
// PostgreSQL, in a fresh schema that a restart keeps.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";

let schemas = 0;

async function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function freshSchema(base) {
  const schema = `ui${process.pid}_${++schemas}`;
  const r = spawnSync("psql", [base, "-v", "ON_ERROR_STOP=1", "-q", "-c", `CREATE SCHEMA ${schema}`], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`cannot create schema ${schema}: ${r.stderr}`);
  return `${base}${base.includes("?") ? "&" : "?"}options=-csearch_path%3D${schema}`;
}

export class Holdfast {
  // members: [{ userId, role, token }] for a server with credentials.
  static async create({ members } = {}) {
    const bin = process.env.HOLDFAST_BIN;
    if (!bin) throw new Error("HOLDFAST_BIN must name the holdfast binary to test");
    const h = new Holdfast();
    h.bin = bin;
    h.dir = mkdtempSync(join(tmpdir(), "holdfast-ui-"));
    h.respPort = await freePort();
    h.httpPort = await freePort();
    h.args = ["serve", "--data-dir", h.dir, "--listen", `127.0.0.1:${h.respPort}`, "--http", `127.0.0.1:${h.httpPort}`, "--unix", join(h.dir, "holdfast.sock")];
    if (members) {
      const sha = (t) => createHash("sha256").update(t).digest("hex");
      writeFileSync(join(h.dir, "credentials.toml"), members.map((m) => `[[member]]\nuserId = "${m.userId}"\nrole = "${m.role}"\ntokenSha256 = "${sha(m.token)}"\n`).join("\n"));
      writeFileSync(join(h.dir, "holdfast.toml"), `[auth]\ncredentials = "credentials.toml"\n`);
      h.args.push("--config", join(h.dir, "holdfast.toml"));
    }
    if (process.env.HOLDFAST_TEST_STORE_URL) h.args.push("--store", freshSchema(process.env.HOLDFAST_TEST_STORE_URL));
    await h.start();
    return h;
  }

  get url() {
    return `http://127.0.0.1:${this.httpPort}`;
  }

  async start() {
    this.output = "";
    this.child = spawn(this.bin, this.args, { stdio: ["ignore", "pipe", "pipe"] });
    this.child.stderr.on("data", (b) => (this.output += b.toString()));
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`holdfast serve did not become ready:\n${this.output}`)), 30_000);
      this.child.once("exit", (code) => reject(new Error(`holdfast serve exited with ${code}:\n${this.output}`)));
      createInterface({ input: this.child.stdout }).on("line", (line) => {
        this.output += line + "\n";
        if (line.startsWith("holdfast ready")) {
          clearTimeout(timer);
          resolve();
        }
      });
    });
  }

  async stop() {
    if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once("exit", resolve));
    this.child.kill("SIGTERM");
    await exited;
  }

  async cleanup() {
    await this.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
