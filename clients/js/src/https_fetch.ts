// fetch over node:https with the client's TLS settings (a CA of its own, a client
// certificate), which the global fetch cannot take. Only what the HTTP transport uses: the
// method, headers, a string body, the abort signal, and a Response with the status and body.
// Connections are kept alive (and unref'd while idle, so they do not keep the process up).
import { Buffer } from "node:buffer";
import * as https from "node:https";

import type { TlsOptions } from "./tls.js";

export interface HttpsFetch {
  fetch: typeof fetch;
  /** Closes the kept-alive connections. */
  close(): void;
}

export function httpsFetch(tls: TlsOptions): HttpsFetch {
  const agent = new https.Agent({ keepAlive: true, ...(tls as https.AgentOptions) });
  const request = (input: string | URL | Request, init?: RequestInit): Promise<Response> =>
    new Promise<Response>((resolve, reject) => {
      const signal = init?.signal ?? undefined;
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      const req = https.request(
        new URL(String(input)),
        { method: init?.method ?? "GET", headers: init?.headers as Record<string, string>, agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", reject);
          res.on("end", () => {
            const status = res.statusCode ?? 0;
            const empty = status === 204 || status === 304;
            resolve(new Response(empty ? null : Buffer.concat(chunks), { status }));
          });
        },
      );
      req.on("error", reject);
      signal?.addEventListener("abort", () => req.destroy(signal.reason instanceof Error ? signal.reason : new Error("aborted")), {
        once: true,
      });
      if (typeof init?.body === "string") req.write(init.body);
      req.end();
    });
  return { fetch: request as typeof fetch, close: () => agent.destroy() };
}
