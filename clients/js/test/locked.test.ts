// client.locked as a TypeScript decorator and as a plain wrapper, with {name} placeholders
// filled from the call's parameter object, against a real server.
import assert from "node:assert/strict";
import { before, describe, test } from "node:test";

import { createClient, InvalidArgumentError, type HoldfastClient } from "@holdfast/client";

import { clientMaker, serverForFile } from "./support/fixtures.js";
import { TRANSPORTS } from "./support/server.js";
import { waitFor, waitForWaiters } from "./support/wait.js";

const server = serverForFile();

for (const transport of TRANSPORTS) {
  describe(`locked over ${transport}`, () => {
    const newClient = clientMaker(server, transport);
    let client: HoldfastClient;
    let observer: HoldfastClient;
    before(() => {
      client = newClient();
      observer = newClient();
    });

    test("the decorator locks the key named by the parameters, around the method", async () => {
      const prefix = transport;
      class Payments {
        readonly seen: string[] = [];
        constructor(private readonly region: string) {}

        @client.locked(`${prefix}:payment:{orderId}`, { ttlMs: 10_000, timeoutMs: 5_000 })
        async pay(params: { orderId: string; amount: number }) {
          const s = await observer.locks.status(`${prefix}:payment:${params.orderId}`);
          this.seen.push(`${this.region}:${params.orderId}:${s.held}`);
          return params.amount;
        }
      }
      const payments = new Payments("eu");
      assert.equal(await payments.pay({ orderId: "o-17", amount: 12 }), 12);
      assert.deepEqual(payments.seen, ["eu:o-17:true"], "held while the method ran; `this` kept");
      assert.equal((await observer.locks.status(`${prefix}:payment:o-17`)).held, false, "released after");
    });

    test("calls with the same key never overlap; other keys run alongside", async () => {
      let inside = 0;
      let most = 0;
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const work = client.locked(`${transport}:task:{taskId}`)(async (params: { taskId: string }) => {
        inside += 1;
        most = Math.max(most, inside);
        if (params.taskId === "a") await gate;
        inside -= 1;
        return params.taskId;
      });
      const a1 = work({ taskId: "a" });
      await waitFor("the first a to be inside", () => inside === 1);
      const a2 = work({ taskId: "a" });
      await waitForWaiters(observer, `${transport}:task:a`, 1);
      // b does not wait for a: it finishes while a1 is still inside.
      assert.equal(await work({ taskId: "b" }), "b");
      assert.equal(most, 2, "b ran alongside the first a");
      release();
      assert.deepEqual(await Promise.all([a1, a2]), ["a", "a"]);
      assert.equal(most, 2, "the two a never ran together");
    });

    test("nested placeholders, literal braces, numbers", async () => {
      const keys: string[] = [];
      const probe = client.locked(`${transport}:{{x}}:{user.id}:{n}`)(async (_p: { user: { id: string }; n: number }) => {
        for await (const page of observer.locks.list({ match: `${transport}:{x}:*` })) keys.push(...page.locks.map((l) => l.key));
      });
      await probe({ user: { id: "u1" }, n: 7 });
      assert.deepEqual(keys, [`${transport}:{x}:u1:7`]);
    });

    test("a missing placeholder refuses the call before anything is locked", async () => {
      let ran = false;
      const work = client.locked(`${transport}:payment:{orderId}`)(async (_p: { orderId?: string }) => (ran = true));
      await assert.rejects(work({}), (e) => e instanceof InvalidArgumentError && /needs orderId/.test(e.message));
      await assert.rejects(work({ orderId: {} as string }), InvalidArgumentError);
      assert.equal(ran, false);
    });
  });
}

describe("locked templates and decorator forms", () => {
  const client = createClient({ passThrough: true, logger: { warn() {} } });

  test("a bad template is refused where it is declared", () => {
    assert.throws(() => client.locked("payment:{order id}"), InvalidArgumentError);
    assert.throws(() => client.locked("payment:{orderId"), InvalidArgumentError);
    assert.throws(() => client.locked("payment:}"), InvalidArgumentError);
    assert.throws(() => client.locked(""), InvalidArgumentError);
  });

  test("the experimentalDecorators form wraps the descriptor's method", async () => {
    const descriptor: PropertyDescriptor = {
      value: async function (this: { tag: string }, p: { id: string }) {
        return `${this.tag}:${p.id}`;
      },
    };
    const decorate = client.locked("task:{id}");
    const out = decorate({}, "move", descriptor);
    assert.equal(out, descriptor);
    assert.equal(await descriptor.value.call({ tag: "t" }, { id: "9" }), "t:9");
  });

  test("decorating something that is not a method is a TypeError", () => {
    const decorate = client.locked("x") as unknown as (a: unknown, b?: unknown) => unknown;
    assert.throws(() => decorate(undefined, { kind: "field" }), TypeError);
    assert.throws(() => decorate(42), TypeError);
  });
});
