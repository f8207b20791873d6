// The pieces with no server: the RESP reply decoder, error lines, server URLs, key templates.
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { describe, test } from "node:test";

import { compileKeyTemplate } from "../src/key_template.js";
import { NEED_MORE, ReplyDecoder, RespErrorReply, asRecord, encodeCommand } from "../src/resp/codec.js";
import { parseErrorLine } from "../src/resp/error_line.js";
import { parseServerUrl } from "../src/url.js";

function decodeAll(bytes: string, chunk = bytes.length): unknown[] {
  const d = new ReplyDecoder();
  const out: unknown[] = [];
  const buf = Buffer.from(bytes, "utf8");
  for (let i = 0; i < buf.length; i += chunk) {
    d.push(buf.subarray(i, i + chunk));
    for (let r = d.read(); r !== NEED_MORE; r = d.read()) out.push(r);
  }
  return out;
}

describe("RESP decoding", () => {
  const reply =
    "%3\r\n+key\r\n$8\r\njobs:ü1\r\n$4\r\nheld\r\n#t\r\n+token\r\n:42\r\n" + // a RESP3 map
    "*4\r\n$3\r\nkey\r\n$1\r\nk\r\n$5\r\nowner\r\n$-1\r\n" + // RESP2 fields with a nil
    "_\r\n,1.5\r\n(12345678901234567890\r\n=8\r\ntxt:some\r\n~2\r\n:1\r\n:2\r\n" +
    "|1\r\n+ttl\r\n:3\r\n+after-attribute\r\n>2\r\n+pubsub\r\n+x\r\n+after-push\r\n" +
    "-LOCK_TIMEOUT no grant key=k timeoutMs=5\r\n!9\r\nSYNTAX no\r\n";

  const expected = [
    { key: "jobs:ü1", held: true, token: 42 },
    ["key", "k", "owner", null],
    null,
    1.5,
    12345678901234567890n,
    "some",
    [1, 2],
    "after-attribute",
    "after-push",
    new RespErrorReply("LOCK_TIMEOUT no grant key=k timeoutMs=5"),
    new RespErrorReply("SYNTAX no"),
  ];

  test("every reply type, whole", () => {
    assert.deepEqual(decodeAll(reply), expected);
  });

  test("the same bytes split at every size decode the same", () => {
    for (const size of [1, 2, 3, 7, 13]) assert.deepEqual(decodeAll(reply, size), expected, `chunks of ${size}`);
  });

  test("RESP2 flat arrays and RESP3 maps read as the same record", () => {
    assert.deepEqual(asRecord(["a", 1, "b", null]), { a: 1, b: null });
    assert.deepEqual(asRecord({ a: 1 }), { a: 1 });
    assert.equal(asRecord(["odd"]), null);
    assert.equal(asRecord("x"), null);
  });

  test("bytes that are not RESP are refused", () => {
    const d = new ReplyDecoder();
    d.push(Buffer.from("HTTP/1.1 400 Bad Request\r\n"));
    assert.throws(() => d.read(), /unknown reply type/);
    const n = new ReplyDecoder();
    n.push(Buffer.from(":12x\r\n"));
    assert.throws(() => n.read(), /not an integer/);
  });

  test("commands are arrays of bulk strings, lengths in bytes", () => {
    assert.equal(encodeCommand(["LOCK.TRY", "ü", "TTL", "10"]).toString("utf8"), "*4\r\n$8\r\nLOCK.TRY\r\n$2\r\nü\r\n$3\r\nTTL\r\n$2\r\n10\r\n");
  });
});

describe("error lines", () => {
  test("code, message and trailing details", () => {
    assert.deepEqual(parseErrorLine("LOCK_TIMEOUT no grant within the timeout key=jobs:1 timeoutMs=300"), {
      code: "LOCK_TIMEOUT",
      message: "no grant within the timeout",
      details: { key: "jobs:1", timeoutMs: 300 },
    });
  });

  test("JSON-quoted values keep spaces, quotes and '='", () => {
    assert.deepEqual(parseErrorLine('LOCK_TIMEOUT no grant key="a b=\\"c\\"" timeoutMs=5'), {
      code: "LOCK_TIMEOUT",
      message: "no grant",
      details: { key: 'a b="c"', timeoutMs: 5 },
    });
  });

  test("a name=value word inside the message stays in the message", () => {
    const e = parseErrorLine("INVALID_ARGUMENT use x=1 here, not there field=ttlMs");
    assert.equal(e.message, "use x=1 here, not there");
    assert.deepEqual(e.details, { field: "ttlMs" });
  });

  test("a bare code, and Redis-style errors", () => {
    assert.deepEqual(parseErrorLine("NOAUTH"), { code: "NOAUTH", message: "NOAUTH", details: {} });
    assert.deepEqual(parseErrorLine("ERR unknown command 'FLUSHALL'"), {
      code: "ERR",
      message: "unknown command 'FLUSHALL'",
      details: {},
    });
  });
});

describe("server URLs", () => {
  test("the forms of the C++ client and the CLI", () => {
    assert.deepEqual(parseServerUrl("holdfast://127.0.0.1:7420"), {
      transport: "resp",
      nodes: [{ kind: "tcp", host: "127.0.0.1", port: 7420 }],
      tls: false,
    });
    assert.deepEqual(parseServerUrl("holdfast://:s%40cret@example.com"), {
      transport: "resp",
      nodes: [{ kind: "tcp", host: "example.com", port: 7420 }],
      tls: false,
      token: "s@cret",
    });
    assert.deepEqual(parseServerUrl("holdfast://alice:tok@[::1]:7000,db2/"), {
      transport: "resp",
      nodes: [
        { kind: "tcp", host: "::1", port: 7000 },
        { kind: "tcp", host: "db2", port: 7420 },
      ],
      tls: false,
      user: "alice",
      token: "tok",
    });
    assert.deepEqual(parseServerUrl("rediss://:tok@locks.example.com:7500"), {
      transport: "resp",
      nodes: [{ kind: "tcp", host: "locks.example.com", port: 7500 }],
      tls: true,
      token: "tok",
    });
    assert.deepEqual(parseServerUrl("rediss://h1,h2:7421").tls, true);
    assert.deepEqual(parseServerUrl("unix:///run/holdfast.sock"), {
      transport: "resp",
      nodes: [{ kind: "unix", path: "/run/holdfast.sock" }],
      tls: false,
    });
    assert.deepEqual(parseServerUrl("unix://:t@/run/h.sock"), {
      transport: "resp",
      nodes: [{ kind: "unix", path: "/run/h.sock" }],
      tls: false,
      token: "t",
    });
    assert.deepEqual(parseServerUrl("/tmp/h.sock"), { transport: "resp", nodes: [{ kind: "unix", path: "/tmp/h.sock" }], tls: false });
    assert.deepEqual(parseServerUrl("h1:1,h2:2").transport, "resp");
    assert.deepEqual(parseServerUrl("http://:tok@127.0.0.1:7421/"), { transport: "http", baseUrl: "http://127.0.0.1:7421", tls: false, token: "tok" });
    assert.deepEqual(parseServerUrl("https://locks.example.com/holdfast"), {
      transport: "http",
      baseUrl: "https://locks.example.com/holdfast",
      tls: true,
    });
  });

  test("mistakes are named, never echoing a token", () => {
    const cases: [string, RegExp][] = [
      ["", /empty/],
      ["ftp://x", /unsupported scheme 'ftp'/],
      ["holdfast://h:99999", /port '99999'/],
      ["holdfast://::1:7420", /\[brackets\]/],
      ["holdfast://h:1,,h:2", /empty entry/],
      ["holdfast://h:1/db", /no path/],
      ["unix://relative.sock", /absolute path/],
      ["holdfast://:%zz@h", /two hex digits/],
      ["http://h:1/?q=1", /no query/],
    ];
    for (const [url, message] of cases) {
      assert.throws(() => parseServerUrl(url), (e: Error) => message.test(e.message) && !e.message.includes("%zz"), url);
    }
  });
});

describe("key templates", () => {
  test("fills names, nested names and literal braces", () => {
    assert.equal(compileKeyTemplate("payment:{orderId}")({ orderId: "o-1" }), "payment:o-1");
    assert.equal(compileKeyTemplate("{{{a.b}}}:{n}:{f}")({ a: { b: "x" }, n: 3, f: false }), "{x}:3:false");
    assert.equal(compileKeyTemplate("turn")(undefined), "turn");
  });
});
