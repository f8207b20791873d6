// Certificates for the TLS tests, made with the openssl command in a folder of their own: a CA,
// the server's certificate (for 127.0.0.1 and localhost), client certificates by common name,
// and a CA the server does not trust. EC P-256 keys: quick to make.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

function openssl(args: string[]): void {
  const r = spawnSync("openssl", args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`openssl ${args.join(" ")} failed:\n${r.stderr}`);
}

const NEW_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

export class TestCertificates {
  readonly dir = mkdtempSync(join(tmpdir(), "holdfast-js-certs-"));
  private serial = 1000;

  constructor() {
    this.makeCa("ca", "/CN=Holdfast JS test CA");
    this.makeCa("other-ca", "/CN=Another CA");
    this.issue("server", "/CN=localhost", "ca", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n");
  }

  file(name: string): string {
    return join(this.dir, name);
  }
  /** PEM contents, as the client's tls option takes them. */
  pem(name: string): string {
    return readFileSync(this.file(name), "utf8");
  }
  get server(): { cert: string; key: string } {
    return { cert: this.file("server.pem"), key: this.file("server.key") };
  }
  /** A client certificate with subject CN `commonName`: its PEM contents. */
  client(commonName: string): { cert: string; key: string } {
    const name = `client-${commonName}`;
    this.issue(name, `/CN=${commonName}`, "ca", "extendedKeyUsage=clientAuth\n");
    return { cert: this.pem(`${name}.pem`), key: this.pem(`${name}.key`) };
  }

  cleanup(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }

  private makeCa(name: string, subject: string): void {
    openssl(["req", "-x509", ...NEW_KEY, "-keyout", this.file(`${name}.key`), "-out", this.file(`${name}.pem`), "-days", "30",
      "-subj", subject, "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"]);
  }

  private issue(name: string, subject: string, ca: string, extensions: string): void {
    const base = this.file(name);
    openssl(["req", ...NEW_KEY, "-keyout", `${base}.key`, "-out", `${base}.csr`, "-subj", subject]);
    writeFileSync(`${base}.ext`, `basicConstraints=CA:FALSE\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n${extensions}`);
    openssl(["x509", "-req", "-in", `${base}.csr`, "-CA", this.file(`${ca}.pem`), "-CAkey", this.file(`${ca}.key`),
      "-set_serial", String(++this.serial), "-days", "30", "-extfile", `${base}.ext`, "-out", `${base}.pem`]);
  }
}
