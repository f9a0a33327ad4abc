// Where a direct-mode call's time goes. Prints a cost breakdown of the pieces the runtime's direct
// path runs per call (each timed alone), then runs the call in a loop under a CPU profile (of the
// loop alone, written to the file given):
//   tsx src/profile-direct.ts [calls] [file.cpuprofile]
//   tsx src/profile-summary.ts <file.cpuprofile>
// (`pnpm --filter @flaplab/bench run profile:direct` does both.)
import { AsyncLocalStorage } from "node:async_hooks";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create } from "@bufbuild/protobuf";
import { createHandlerContext } from "@connectrpc/connect";
import { runInCall } from "@flaplab/component";
import { GenerateWorldRequestSchema, GenerateWorldResponseSchema } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import { parseBearer } from "@flaplab/identity";
import { createRuntime } from "@flaplab/runtime";
import { worldgenComponent } from "@flaplab/worldgen";
import { startProfile, stopProfile } from "./inspector-profile.js";
import { benchKeys, benchRequest, inProcessTopology, stubWorldGen } from "./rpc-fixture.js";

/** ns per call of `fn`, the median of 7 batches of `n` calls (async when it returns a promise). */
async function nsPer(n: number, fn: () => unknown): Promise<number> {
  const batches: number[] = [];
  for (let b = 0; b < 8; b++) {
    const t = performance.now();
    for (let i = 0; i < n; i++) {
      const r = fn();
      if (r instanceof Promise) await r;
    }
    if (b > 0) batches.push(((performance.now() - t) * 1e6) / n);
  }
  return batches.sort((a, b) => a - b)[3]!;
}

async function main(): Promise<void> {
  const calls = Number(process.argv[2] ?? 300_000);
  const profileFile = process.argv[3];
  const dir = await mkdtemp(join(tmpdir(), "flaplab-profile-"));
  const keys = await benchKeys(dir);
  const token = await keys.callerToken();
  const headers = { authorization: `Bearer ${token}` };
  const request = benchRequest();
  const runtime = createRuntime({ topology: inProcessTopology("direct"), group: "all", verifier: keys.verifier });
  runtime.mount(worldgenComponent, stubWorldGen());
  const client = runtime.client(worldgenComponent, "bench");
  const impl = stubWorldGen();
  const method = worldgenComponent.service.method.generateWorld;
  const response = impl.generateWorld(request, undefined as never);
  const als = new AsyncLocalStorage<object>();
  await keys.verifier.verify(token);

  const n = 20_000;
  const rows: [string, number][] = [
    ["whole direct call (client.generateWorld)", await nsPer(n, () => client.generateWorld(request, { headers }))],
    ["bare impl call, awaited", await nsPer(n, async () => impl.generateWorld(request, undefined as never))],
    ["verifier.verify (cached token)", await nsPer(n, () => keys.verifier.verify(token))],
    ["parseBearer (regex)", await nsPer(n, () => parseBearer(headers.authorization))],
    ["new Headers(init) ×1", await nsPer(n, () => new Headers(headers))],
    ["Connect's createHandlerContext + abort() (not used by the direct path)", await nsPer(n, () => createHandlerContext({ service: method.parent, method, protocolName: "direct", requestMethod: "POST", url: "direct:/x", requestHeader: new Headers() }).abort())],
    ["create(request schema, message) (already a message)", await nsPer(n, () => create(GenerateWorldRequestSchema, request))],
    ["create(response schema, message)", await nsPer(n, () => create(GenerateWorldResponseSchema, response as never))],
    ["runInCall (AsyncLocalStorage.run) + async fn", await nsPer(n, () => runInCall({ component: "worldgen", verb: "GenerateWorld" }, async () => 1))],
    ["AsyncLocalStorage.run, sync fn", await nsPer(n, () => als.run({}, () => 1))],
    ["process.hrtime.bigint ×2", await nsPer(n, () => process.hrtime.bigint() - process.hrtime.bigint())],
    ["an async function returning a value", await nsPer(n, async () => 1)],
  ];
  process.stdout.write("direct-mode pieces, ns per call (median of 7 batches):\n");
  for (const [name, ns] of rows) process.stdout.write(`${ns.toFixed(0).padStart(8)} ns  ${name}\n`);

  // The loop the CPU profile covers.
  if (profileFile) await startProfile(1000);
  const t = performance.now();
  for (let i = 0; i < calls; i++) await client.generateWorld(request, { headers });
  const usPerCall = ((performance.now() - t) * 1e3) / calls;
  if (profileFile) await stopProfile(profileFile);
  process.stdout.write(`\nprofiled loop: ${calls} direct calls, ${usPerCall.toFixed(2)} µs each\n`);
  runtime.close();
  await rm(dir, { recursive: true, force: true });
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
