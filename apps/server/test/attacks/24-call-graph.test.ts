// Attack: a component credential used on an edge the call graph does not have. A credential
// captured from one call (say the engine's, on its way to the score component), or signed by any
// process holding the components' key, was accepted by every internal method: the music
// component's credential could start games with a world of its choosing, the initiator's could
// record runs. Now each internal method names its callers — initiator→worldgen GenerateWorld,
// initiator→engine StartGame/ResumeGame, engine→music PlayMusic, engine→score RecordRun — and any
// other component's credential is refused with permission_denied. (Each credential here names the
// method's component as its audience, as a real one would; 26-credential-replay.test.ts replays
// one against another component.)
import { EngineService } from "@flaplab/contracts/engine/v1/engine_pb";
import { MusicService, Sound } from "@flaplab/contracts/music/v1/music_pb";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { WorldGenService } from "@flaplab/contracts/worldgen/v1/worldgen_pb";
import type { ComponentName } from "@flaplab/component";
import { generateWorld } from "@flaplab/worldgen";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outcome, startMonolith, type Monolith } from "./credentials-harness.js";

let m: Monolith;
let as: (component: ComponentName, callee: ComponentName) => Promise<Record<string, string>>;

beforeAll(async () => {
  m = await startMonolith();
  await m.register("mallory");
  const signer = (await m.keys()).components;
  as = async (component, callee) => ({ authorization: `Bearer ${await signer.tokenFor(component, callee, "mallory")}` });
}, 60_000);

afterAll(async () => {
  await m?.stop();
});

describe("component credentials off the call graph", () => {
  it("are refused with permission_denied; the graph's own edges still work", async () => {
    const world = generateWorld(6977347407732442987n, { width: 480, height: 640 });
    const callee: Record<string, ComponentName> = { StartGame: "engine", GenerateWorld: "worldgen", RecordRun: "score", PlayMusic: "music" };
    const calls: Record<string, (headers: Record<string, string>) => Promise<unknown>> = {
      "StartGame": (h) => m.client(EngineService, "connect", h).startGame({ gameId: `g-${Math.random().toString(36).slice(2)}`, world, bird: { width: 34, height: 24 } }),
      "GenerateWorld": (h) => m.client(WorldGenService, "connect", h).generateWorld({ gameId: "g", viewport: { width: 480, height: 640 }, seed: 1n }),
      "RecordRun": (h) => m.client(ScoreService, "connect", h).recordRun({ gameId: `r-${Math.random().toString(36).slice(2)}`, score: 99, ticks: 120, seed: 1n }),
      "PlayMusic": (h) => m.client(MusicService, "connect", h).playMusic({ gameId: "no-stream", sound: Sound.FLAP, inputSeq: 1, tick: 1 }),
    };
    const offGraph: Array<[ComponentName, string]> = [
      ["music", "StartGame"],
      ["engine", "StartGame"],
      ["engine", "GenerateWorld"],
      ["initiator", "RecordRun"],
      ["music", "RecordRun"],
      ["initiator", "PlayMusic"],
      ["score", "PlayMusic"],
    ];
    const got: Record<string, string> = {};
    for (const [caller, method] of offGraph) got[`${caller}→${method}`] = await outcome(calls[method]!(await as(caller, callee[method]!)));
    const onGraph: Record<string, string> = {
      "initiator→StartGame": await outcome(calls["StartGame"]!(await as("initiator", "engine"))),
      "initiator→GenerateWorld": await outcome(calls["GenerateWorld"]!(await as("initiator", "worldgen"))),
      "engine→RecordRun": await outcome(calls["RecordRun"]!(await as("engine", "score"))),
    };
    console.log(`off the call graph: ${JSON.stringify(got)}; on it: ${JSON.stringify(onGraph)}`);
    for (const [edge, code] of Object.entries(got)) expect(code, edge).toBe("permission_denied");
    expect(onGraph).toEqual({ "initiator→StartGame": "ok", "initiator→GenerateWorld": "ok", "engine→RecordRun": "ok" });
  });
});
