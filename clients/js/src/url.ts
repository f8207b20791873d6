// Server URLs, in the same forms as the C++ client and the `holdfast` command:
//
//   http://host:port[/prefix], https://...      the HTTP/JSON API (fetch; Node and browsers)
//   holdfast://[user[:token]@]host[:port]       RESP over TCP; port 7420 when omitted
//   rediss://[user[:token]@]host[:port]         RESP over TLS (and rediss://h1,h2 for nodes)
//   holdfast://:token@host:port                 a bearer token without a user name
//   holdfast://[user:token@]h1:7420,h2:7420     the nodes of a scale-out cluster
//   unix:///path/to.sock, unix://:token@/path   RESP over a Unix socket
//   host:port, host, /path/to.sock              shorthands for the RESP forms
//
// User and token are percent-decoded. Pure parsing: nothing is resolved or connected here.
import { invalidArgument } from "./errors.js";

export const DEFAULT_PORT = 7420;

export type RespNode = { kind: "tcp"; host: string; port: number } | { kind: "unix"; path: string };

export type ServerUrl =
  | { transport: "http"; baseUrl: string; tls: boolean; user?: string; token?: string }
  | { transport: "resp"; nodes: RespNode[]; tls: boolean; user?: string; token?: string };

function bad(what: string): never {
  throw invalidArgument("url", `bad server URL: ${what}`);
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return bad("a '%' in the credentials is not followed by two hex digits");
  }
}

function userinfo(info: string): { user?: string; token?: string } {
  const colon = info.indexOf(":");
  const user = decode(colon < 0 ? info : info.slice(0, colon));
  const out: { user?: string; token?: string } = {};
  if (user !== "") out.user = user;
  if (colon >= 0) out.token = decode(info.slice(colon + 1));
  return out;
}

function hostPort(text: string): RespNode {
  let host: string;
  let portText: string | undefined;
  if (text.startsWith("[")) {
    const close = text.indexOf("]");
    if (close < 0) bad("unclosed '[' in an IPv6 address");
    host = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest !== "") {
      if (!rest.startsWith(":")) bad("expected ':port' after the IPv6 address");
      portText = rest.slice(1);
    }
  } else {
    const colon = text.lastIndexOf(":");
    if (colon >= 0 && text.indexOf(":") !== colon) bad("an IPv6 address must be in [brackets]");
    host = colon < 0 ? text : text.slice(0, colon);
    if (colon >= 0) portText = text.slice(colon + 1);
  }
  if (host === "") bad("no host");
  let port = DEFAULT_PORT;
  if (portText !== undefined) {
    port = /^\d{1,5}$/.test(portText) ? Number(portText) : 0;
    if (port < 1 || port > 65535) bad(`port '${portText}' is not a number from 1 to 65535`);
  }
  return { kind: "tcp", host, port };
}

function parseUnix(rest: string): ServerUrl {
  let creds = {};
  if (!rest.startsWith("/")) {
    const at = rest.indexOf("@");
    if (at < 0) bad("unix:// needs an absolute path, e.g. unix:///run/holdfast.sock");
    creds = userinfo(rest.slice(0, at));
    rest = rest.slice(at + 1);
  }
  if (!rest.startsWith("/")) bad("unix:// needs an absolute path, e.g. unix:///run/holdfast.sock");
  return { transport: "resp", nodes: [{ kind: "unix", path: rest }], tls: false, ...creds };
}

function parseTcp(authority: string, tls: boolean): ServerUrl {
  const slash = authority.indexOf("/");
  if (slash >= 0) {
    if (slash + 1 !== authority.length) bad("a server URL has no path");
    authority = authority.slice(0, slash);
  }
  let creds = {};
  const at = authority.lastIndexOf("@");
  if (at >= 0) {
    creds = userinfo(authority.slice(0, at));
    authority = authority.slice(at + 1);
  }
  const nodes = authority.split(",").map((node) => {
    if (node === "") bad("empty entry in the node list");
    return hostPort(node);
  });
  return { transport: "resp", nodes, tls, ...creds };
}

function parseHttp(url: string): ServerUrl {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return bad(`'${url.replace(/\/\/[^@/]*@/, "//")}' is not a URL`);
  }
  const creds = userinfo(parsed.username + (parsed.password !== "" || url.includes(":@") ? `:${parsed.password}` : ""));
  // fetch refuses URLs that carry credentials: they travel as the bearer token instead.
  parsed.username = "";
  parsed.password = "";
  if (parsed.search !== "" || parsed.hash !== "") bad("an http:// server URL has no query or fragment");
  return { transport: "http", baseUrl: parsed.toString().replace(/\/+$/, ""), tls: parsed.protocol === "https:", ...creds };
}

/** Throws InvalidArgumentError (details.field "url") naming what is wrong; never echoes a token. */
export function parseServerUrl(url: string): ServerUrl {
  if (url === "") bad("empty");
  if (/^https?:\/\//i.test(url)) return parseHttp(url);
  if (url.startsWith("holdfast://")) return parseTcp(url.slice("holdfast://".length), false);
  if (url.startsWith("rediss://")) return parseTcp(url.slice("rediss://".length), true);
  if (url.startsWith("unix://")) return parseUnix(url.slice("unix://".length));
  if (url.startsWith("/")) return parseUnix(url);
  const scheme = url.indexOf("://");
  if (scheme >= 0)
    bad(`unsupported scheme '${url.slice(0, scheme)}' (use http://host:port, holdfast://host:port, rediss://host:port or unix:///path)`);
  return parseTcp(url, false);
}

/** For messages: "127.0.0.1:7420", "[::1]:7420" or "unix:/path/to.sock". Never a token. */
export function describeNode(node: RespNode): string {
  if (node.kind === "unix") return `unix:${node.path}`;
  return node.host.includes(":") ? `[${node.host}]:${node.port}` : `${node.host}:${node.port}`;
}
