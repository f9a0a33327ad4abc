// Attack: InitiatorService.ResumeGame with a game id of almost 1 MiB, on a deployment of several
// engines (microservices-sharded: three engine processes, snapshots in Redis). Before, the
// initiator checked only that the id was not empty: its placement looked the id up in the snapshot
// store (a 1 MiB key, twice, sent to Redis) and passed it on to an engine, whose 64-character check
// refused it only then. Now the initiator refuses it first (invalid_argument), and nothing of it
// reaches Redis or an engine. Full tier: it needs several processes and Redis.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import type { Deployment } from "@flaplab/deployment";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTopology } from "../helpers.js";

const run = promisify(execFile);
let deployment: Deployment;
let initiator: ReturnType<typeof createClient<typeof InitiatorService>>;
let token: string;

beforeAll(async () => {
  const started = await startTopology("microservices-sharded");
  deployment = started.deployment;
  token = await started.register("mallory");
  initiator = createClient(InitiatorService, createConnectTransport({ baseUrl: started.url("initiator"), httpVersion: "1.1" }));
}, 120_000);

afterAll(async () => {
  await deployment?.stop();
});

/** Bytes Redis has read from its clients so far. */
async function redisInputBytes(): Promise<number> {
  const { stdout } = await run("redis-cli", ["-u", deployment.snapshotStoreUrl!, "INFO", "stats"]);
  return Number(/total_net_input_bytes:(\d+)/.exec(stdout)?.[1] ?? Number.NaN);
}

describe("ResumeGame with a 1 MiB game id", () => {
  it("is refused by the initiator before the id is used as a snapshot-store key or sent to an engine", async () => {
    const gameId = "g".repeat(1024 * 1024 - 64);
    const before = await redisInputBytes();
    const t0 = performance.now();
    const err = await initiator.resumeGame({ gameId }, { headers: { authorization: `Bearer ${token}` } }).then(
      () => undefined,
      (e: unknown) => ConnectError.from(e),
    );
    const ms = performance.now() - t0;
    const read = (await redisInputBytes()) - before;
    console.log(`ResumeGame with a ${gameId.length}-character id: ${err ? `${Code[err.code]} "${err.rawMessage}"` : "ok"} in ${ms.toFixed(0)} ms; Redis read ${read} bytes meanwhile`);
    expect(err?.code).toBe(Code.InvalidArgument);
    expect(err?.rawMessage).toBe("game id longer than 64 characters");
    // Heartbeats of three engines only (a few hundred bytes each), not the 1 MiB key.
    expect(read).toBeLessThan(200_000);
  }, 60_000);
});
