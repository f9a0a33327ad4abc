import { describe, expect, it } from "vitest";
import { deriveActions } from "../src/whatif/call-graph.js";
import { fitModel } from "../src/whatif/fit.js";
import { modelCalls } from "../src/whatif/model.js";
import { median } from "../src/whatif/study.js";
import { fixtureStudy } from "./whatif-fixture.js";

describe("the model's paths, from the call logs", () => {
  it("finds the game's actions and their calls: start, flap, tick", async () => {
    const { study } = await fixtureStudy();
    const actions = deriveActions(study.runs);
    expect(actions.map((a) => `${a.entry.component}.${a.entry.verb}`)).toEqual(["engine.HandleInput", "engine.Tick", "initiator.StartGame"]);
    const start = actions.find((a) => a.entry.verb === "StartGame")!;
    expect(start.calls.map((c) => c.key)).toEqual(["worldgen.GenerateWorld<-initiator.StartGame", "engine.StartGame<-initiator.StartGame"]);
    // The initiator asks for the world, then starts the game on the engine: one after the other.
    expect(start.calls.map((c) => c.afterPrevious)).toEqual([false, true]);
    const tick = actions.find((a) => a.entry.verb === "Tick")!;
    expect(tick.calls.map((c) => c.key).sort()).toEqual(["music.PlayMusic<-engine.Tick", "score.RecordRun<-engine.Tick"]);
    // Per game of the easy seed: 14 flaps with a sound, one recorded run.
    const flap = actions.find((a) => a.entry.verb === "HandleInput")!;
    expect(flap.calls[0]!.perGame["6977347407732442987"]).toBe(14);
    expect(tick.calls.find((c) => c.callee === "score")!.perGame["6977347407732442987"]).toBe(1);
  });

  it("puts PlayMusic of a flap on input → audio, the start's calls on start game, and RecordRun beside", async () => {
    const { study, table } = await fixtureStudy();
    const calls = modelCalls(fitModel(study, table));
    expect(calls.get("music.PlayMusic<-engine.HandleInput")!.onPath).toEqual(["input_to_audio"]);
    expect(calls.get("worldgen.GenerateWorld<-initiator.StartGame")!.onPath).toEqual(["start_game"]);
    expect(calls.get("engine.StartGame<-initiator.StartGame")!.onPath).toEqual(["start_game"]);
    expect(calls.get("score.RecordRun<-engine.Tick")!.onPath).toEqual([]);
    expect(calls.get("music.PlayMusic<-engine.Tick")!.onPath).toEqual([]);
  });

  it("derives a call's hop as the caller's time less the callee's and the emulated RTT, per deployment", async () => {
    const { study, table } = await fixtureStudy();
    const model = fitModel(study, table, ["multiregion"]);
    const call = modelCalls(model).get("music.PlayMusic<-engine.HandleInput")!;
    const recs = study.runs.filter((r) => r.deployment === "multiregion").flatMap((r) => r.calls.filter((c) => c.src === "engine" && c.srcVerb === "HandleInput"));
    const caller = median(recs.filter((c) => c.side === "client").map((c) => c.ms));
    const callee = median(recs.filter((c) => c.side === "server").map((c) => c.ms));
    // engine (eu-west-1) → music (eu-central-1): 27 ms in topologies/rtt.json.
    expect(call.hopMs).toBeCloseTo(caller - callee - 27, 6);
    expect(call.ownMs).toBeCloseTo(callee, 6);
    expect(call.hopFrom).toEqual(["multiregion"]);
    // The monolith's calls are direct: no hop to learn from it alone.
    const mono = modelCalls(fitModel(study, table, ["monolith"])).get("music.PlayMusic<-engine.HandleInput")!;
    expect(mono.directMs).toBeGreaterThan(0);
    expect(mono.ownMs).toBeNull();
    expect(mono.hopFrom).toEqual(["other calls"]);
  });

  it("splits a component's CPU into once per game and per second of play from games of two lengths", async () => {
    const { study, table } = await fixtureStudy();
    const engine = fitModel(study, table).cpu.find((c) => c.component === "engine")!;
    const runs = study.runs.filter((r) => r.serverCpu?.groups.some((g) => g.group === "engine"));
    for (const run of runs) {
      const measured = run.serverCpu!.groups.find((g) => g.group === "engine")!.cpuUs;
      const predicted = engine.perGameUs + engine.perGameSecondUs * (run.ticks / 30);
      // Three runs, two parameters: each run within a fifth of the fitted line.
      expect(Math.abs(predicted - measured) / measured).toBeLessThan(0.2);
    }
    expect(engine.perGameSecondUs).toBeGreaterThan(0);
  });
});
