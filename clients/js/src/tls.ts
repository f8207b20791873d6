// TLS settings of a client (Node only): what Node's tls.connect takes, as PEM contents.
//
//   createClient({ url: "rediss://locks.example.com:7420", tls: { ca: readFileSync("ca.pem") } })
//   createClient({ url: "https://locks.example.com:7421", tls: { ca, cert, key } })

/** PEM text, its bytes, or several of them (a CA bundle). */
export type Pem = string | Uint8Array | Array<string | Uint8Array>;

export interface TlsOptions {
  /** The CAs to trust for the server's certificate. Default: Node's bundled CAs. */
  ca?: Pem;
  /** A client certificate: a server whose credentials give a caller its common name
   * (certCommonName) takes the connection as that caller, without a token. */
  cert?: Pem;
  /** The key of `cert`. */
  key?: Pem;
}
