import { describe, expect, it } from "vitest";
import { loadRttTable } from "@flaplab/netem";
import type { Layout } from "../src/whatif/layout.js";
import { MODEL_FORMAT, type ModelCall, type WhatifModel } from "../src/whatif/model.js";
import { predictMetric, predictPlacement } from "../src/whatif/predict.js";
import { splitLayout } from "../src/whatif/placements.js";

const SEED = "1";

function call(key: string, hopMs: number, onPath: ModelCall["onPath"]): ModelCall {
  const [callee, rest] = key.split("<-") as [string, string];
  const [calleeName, method] = callee.split(".") as [string, string];
  const [caller, callerVerb] = rest.split(".") as [string, string];
  return { key, caller, callerVerb, callee: calleeName, method, perGame: { [SEED]: 1 }, afterPrevious: false, ownMs: 1, directMs: 1, hopMs, hopFrom: ["x"], onPath };
}

/** A model with round figures: every hop 2 ms (4 ms for the engine's StartGame). */
const model: WhatifModel = {
  format: MODEL_FORMAT,
  study: "hand-made",
  fittedOn: ["x"],
  seeds: [SEED],
  gameSeconds: { [SEED]: 30 },
  actions: [
    { entry: { component: "engine", verb: "HandleInput" }, calls: [call("music.PlayMusic<-engine.HandleInput", 2, ["input_to_audio"])] },
    { entry: { component: "engine", verb: "Tick" }, calls: [call("score.RecordRun<-engine.Tick", 50, [])] },
    {
      entry: { component: "initiator", verb: "StartGame" },
      calls: [call("worldgen.GenerateWorld<-initiator.StartGame", 2, ["start_game"]), { ...call("engine.StartGame<-initiator.StartGame", 4, ["start_game"]), afterPrevious: true }],
    },
  ],
  metrics: {
    [SEED]: {
      input_to_audio: { baseMs: 4, hopShare: 0.5, browserRoundTrips: 1, browserRoundTripsFrom: "prior", from: ["x"] },
      input_to_effect: { baseMs: 3, hopShare: 1, browserRoundTrips: 1, browserRoundTripsFrom: "prior", from: ["x"] },
      start_game: { baseMs: 30, hopShare: 2, browserRoundTrips: 1.5, browserRoundTripsFrom: "fitted", from: ["x"] },
    },
  },
  cpu: [],
};

const at = (region: string) => ({ region, zone: "a" });

describe("prediction", () => {
  it("adds the base, the hops by their share, and the RTTs of the path (the multiregion placement)", async () => {
    const table = await loadRttTable();
    // topologies/multiregion.json: auth us-east-1, worldgen sa-east-1, engine eu-west-1, initiator us-west-2, music eu-central-1, score sa-east-1.
    const layout: Layout = splitLayout({ auth: at("us-east-1"), worldgen: at("sa-east-1"), engine: at("eu-west-1"), initiator: at("us-west-2"), music: at("eu-central-1"), score: at("sa-east-1") });
    const browser = at("us-east-1");
    // Audio: 4 + 0.5 × 2 + ½ × 70 (browser → engine) + ½ × 27 (engine → music) + ½ × 93 (music → browser) = 100.
    expect(predictMetric(model, SEED, "input_to_audio", layout, browser, table).ms).toBeCloseTo(100, 9);
    // Effect: 3 + 70 (the input there, the ack back).
    expect(predictMetric(model, SEED, "input_to_effect", layout, browser, table).ms).toBeCloseTo(73, 9);
    // Start: 30 + 1.5 × 64 (browser ⇄ initiator) + 2 × (2 + 4) + 175 (→ worldgen) + 118 (→ engine) = 431. RecordRun's 50 ms is beside the path.
    const start = predictMetric(model, SEED, "start_game", layout, browser, table);
    expect(start.ms).toBeCloseTo(431, 9);
    expect(start.terms.reduce((s, t) => s + t.ms, 0)).toBeCloseTo(start.ms, 9);
    expect(start.terms.map((t) => t.label)).toContain("initiator → worldgen GenerateWorld (RTT)");
  });

  it("counts nothing for calls inside one process, and weights player regions", async () => {
    const table = await loadRttTable();
    const all = { region: "us-east-1", zone: "a" };
    const monolith: Layout = [{ name: "monolith", components: ["auth", "worldgen", "engine", "initiator", "music", "score"], ...all }];
    expect(predictMetric(model, SEED, "input_to_audio", monolith, all, table).ms).toBeCloseTo(4 + 0.3 / 2 * 2, 9);
    const p = predictPlacement(model, monolith, [{ region: "us-east-1", weight: 0.75 }, { region: "eu-west-1", weight: 0.25 }], table);
    // From eu-west-1 the audio path crosses 70 ms: half there, half back.
    expect(p.perRegion[1]!.metrics.input_to_audio.ms).toBeCloseTo(4 + 70, 9);
    expect(p.weighted.input_to_audio).toBeCloseTo(0.75 * (4 + 0.3) + 0.25 * 74, 9);
  });
});
