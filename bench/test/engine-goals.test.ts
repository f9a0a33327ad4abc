import { describe, expect, it } from "vitest";
import {
  asGoalResults,
  figure,
  goalTable,
  judgeCpu,
  judgeEngineGoals,
  judgeGc,
  judgeLateness,
  judgeLinkConnections,
  judgeLinkCpu,
  ratioToFloor,
  type EngineGoalInputs,
} from "../src/engine-goals.js";
import type { EngineRow } from "../src/engine-plan.js";
import { capacities } from "../src/engine-report.js";

const FLOOR_LINK = "loopback floor (plain TCP, no engine)";
const LINK = "websocket, Go clients";

/** A row with the fields the goals read; the rest filled in. */
function row(r: Partial<EngineRow> & Pick<EngineRow, "transport" | "games">): EngineRow {
  return {
    lateness: { samples: 1000, p50: 100, p99: r.lateness?.p99 ?? 1000, p999: 2000, max: 3000, mean: 200 },
    ticks: 1000,
    skipped: 0,
    lost: 0,
    cpuPerFrameUs: null,
    pass: true,
    note: "",
    ...r,
  };
}
const p99 = (value: number) => ({ samples: 1000, p50: 100, p99: value, p999: value, max: value, mean: 100 });

describe("the engine goals against this run's floors", () => {
  it("judges lateness against the same clock's floor plus 0.5 ms, with the ratio to the floor", () => {
    const met = judgeLateness(6000, "timers", figure(5600, ""), figure(5251, ""));
    expect(met).toMatchObject({ id: "lateness-timers", value: 5600, floor: 5251, limit: 5751, met: true });
    expect(met.ratio).toBeCloseTo(5600 / 5251, 6);
    expect(judgeLateness(6000, "precise", figure(5752, ""), figure(5251, "")).met).toBe(false);
    // Exactly at the limit is within it.
    expect(judgeLateness(6000, "precise", figure(1500, ""), figure(1000, "")).met).toBe(true);
    expect(judgeLateness(6000, "timers", figure(1400, ""), figure(1200, "")).caution).toBeUndefined();
  });

  it("keeps the verdict against a floor past 2 ms but says that the floor, not the engine, set the p99", () => {
    const busy = judgeLateness(6000, "timers", figure(221_311, ""), figure(257_663, ""));
    expect(busy.met).toBe(true);
    expect(busy.caution).toMatch(/floor alone is past 2 ms/);
    expect(goalTable([busy]).rows[0]![5]).toMatch(/^met \(the floor alone is past 2 ms/);
    expect(judgeLateness(6000, "timers", figure(1900, ""), figure(2000, "")).caution).toBeUndefined();
  });

  it("judges CPU per frame against 4 µs and gives its ratio to the core work", () => {
    const missed = judgeCpu(6000, "setTimeout", figure(6.5, ""), figure(0.5, ""));
    expect(missed).toMatchObject({ value: 6.5, floor: 0.5, ratio: 13, limit: 4, met: false });
    expect(judgeCpu(6000, "setTimeout", figure(3.9, ""), figure(0.5, "")).met).toBe(true);
    // The limit does not depend on the core work: without it the goal is still judged, with no ratio.
    expect(judgeCpu(6000, "setTimeout", figure(3.9, ""), figure(null, "no core work"))).toMatchObject({ met: true, ratio: null, floorText: "–" });
  });

  it("says why a goal has no verdict when its figure or its floor is missing", () => {
    const noStep = judgeCpu(6000, "setTimeout", { missing: "the 6,000-game step failed: timeout" }, figure(0.5, ""));
    expect(noStep).toMatchObject({ value: null, met: null, why: "the 6,000-game step failed: timeout", valueText: "–" });
    const noFloor = judgeLateness(6000, "timers", figure(2000, ""), { missing: "no timer floor at 6,000 idle tasks" });
    expect(noFloor).toMatchObject({ value: 2000, floor: null, limit: null, met: null, why: "no timer floor at 6,000 idle tasks" });
  });

  it("judges the link's connections as a share of the loopback floor's, and has no basis when the floor held none", () => {
    expect(judgeLinkConnections(LINK, figure(100, ""), figure(100, ""))).toMatchObject({ limit: 80, ratio: 1, met: true, atLeast: true });
    expect(judgeLinkConnections(LINK, figure(50, ""), figure(100, ""))).toMatchObject({ limit: 80, ratio: 0.5, met: false });
    const none = judgeLinkConnections(LINK, { value: 0, text: "< 25" }, figure(50, ""));
    expect(none).toMatchObject({ met: false, valueText: "< 25", ratio: 0 });
    const noBasis = judgeLinkConnections(LINK, figure(25, ""), { value: 0, text: "< 25" });
    expect(noBasis.met).toBeNull();
    expect(noBasis.why).toMatch(/held none/);
    expect(noBasis.ratio).toBeNull();
  });

  it("judges the link's server CPU per frame against 1.25× the floor's", () => {
    expect(judgeLinkCpu(LINK, 100, figure(52, ""), figure(42, ""))).toMatchObject({ limit: 52.5, met: true });
    expect(judgeLinkCpu(LINK, 100, figure(53, ""), figure(42, "")).met).toBe(false);
  });

  it("judges GC pauses as an absolute goal, with no floor", () => {
    expect(judgeGc(figure(1.2, ""))).toMatchObject({ floorLabel: null, floor: null, ratio: null, limit: 1, met: false });
    expect(judgeGc(figure(0.9, "")).met).toBe(true);
  });

  it("has no ratio to a floor of zero or a missing one", () => {
    expect(ratioToFloor(5, 0)).toBeNull();
    expect(ratioToFloor(null, 2)).toBeNull();
    expect(ratioToFloor(5, 2)).toBe(2.5);
  });
});

describe("judgeEngineGoals: figures picked from the section's rows", () => {
  const inputs = (rows: EngineRow[], over: Partial<EngineGoalInputs> = {}): EngineGoalInputs => ({
    rows,
    goalGames: 6000,
    coreNs: 500,
    serverClock: "timers",
    goalMissing: {},
    link: LINK,
    floorLink: FLOOR_LINK,
    linkCpuConnections: 100,
    fewestConnections: 25,
    notRun: new Map(),
    ...over,
  });
  const measured: EngineRow[] = [
    row({ transport: "floor", clock: "timers", games: 100, lateness: p99(1200) }),
    row({ transport: "floor", clock: "timers", games: 6000, lateness: p99(5000) }),
    row({ transport: "floor-precise", clock: "precise", games: 6000, lateness: p99(3000) }),
    row({ transport: "memory", clock: "timers", games: 1000, lateness: p99(1900), cpuPerFrameUs: 8 }),
    row({ transport: "memory", clock: "timers", games: 6000, lateness: p99(5400), cpuPerFrameUs: 3.5, pass: false, counted: false }),
    row({ transport: "memory-precise", clock: "precise", games: 6000, lateness: p99(4000), cpuPerFrameUs: 3.9, pass: false }),
    row({ transport: "gc-engine", games: 2000, gc: { count: 17, minor: 17, totalMs: 9, p50Ms: 0.5, maxMs: 1.4, over2Ms: 0 } }),
    row({ transport: "gc-engine", games: 2000, gc: { count: 17, minor: 17, totalMs: 9, p50Ms: 0.5, maxMs: 0.8, over2Ms: 0 } }),
    row({ transport: "stream", variant: FLOOR_LINK, games: 1, cpuPerFrameUs: 400, counted: false }),
    row({ transport: "stream", variant: FLOOR_LINK, games: 100, cpuPerFrameUs: 40 }),
    row({ transport: "stream", variant: FLOOR_LINK, games: 200, cpuPerFrameUs: 35, pass: false }),
    row({ transport: "stream", variant: LINK, games: 100, cpuPerFrameUs: 60, pass: false }),
    row({ transport: "stream", variant: LINK, games: 50, cpuPerFrameUs: 70, pass: true }),
  ];

  it("reads CPU and lateness at the goal's games on each clock (a goal step included), the floors at as many idle tasks", () => {
    const goals = judgeEngineGoals(inputs(measured));
    expect(goals.map((g) => g.id)).toEqual(["cpu", "lateness-timers", "lateness-precise", "link-connections", "link-cpu", "gc"]);
    const byId = Object.fromEntries(goals.map((g) => [g.id, g]));
    expect(byId["cpu"]).toMatchObject({ value: 3.5, floor: 0.5, ratio: 7, met: true });
    expect(byId["lateness-timers"]).toMatchObject({ value: 5400, floor: 5000, limit: 5500, met: true });
    expect(byId["lateness-precise"]).toMatchObject({ value: 4000, floor: 3000, limit: 3500, met: false });
    expect(byId["link-connections"]).toMatchObject({ value: 50, floor: 100, limit: 80, met: false });
    expect(byId["link-cpu"]).toMatchObject({ value: 60, floor: 40, limit: 50, met: false });
    expect(byId["gc"]).toMatchObject({ value: 1.4, met: false });
  });

  it("says why when the goal's step failed, a link was not run, or the GC runs were not made", () => {
    const rows = measured.filter((r) => !(r.transport === "memory" && r.games === 6000) && r.transport !== "gc-engine" && r.variant !== LINK);
    const goals = judgeEngineGoals(
      inputs(rows, { goalMissing: { timers: "the 6,000-game step on the setTimeout clock failed: no answer" }, notRun: new Map([[LINK, "Go is not installed"]]) }),
    );
    const byId = Object.fromEntries(goals.map((g) => [g.id, g]));
    expect(byId["cpu"]).toMatchObject({ met: null, why: "the 6,000-game step on the setTimeout clock failed: no answer" });
    expect(byId["lateness-timers"]).toMatchObject({ met: null, why: "the 6,000-game step on the setTimeout clock failed: no answer" });
    expect(byId["lateness-precise"]!.met).toBe(false);
    expect(byId["link-connections"]).toMatchObject({ met: null, why: `${LINK} not run (Go is not installed)` });
    expect(byId["link-cpu"]!.met).toBeNull();
    expect(byId["gc"]).toMatchObject({ met: null });
    expect(byId["gc"]!.why).toMatch(/not measured/);
  });

  it("without a step at the goal's games on the server's clock, names what is missing", () => {
    const rows = measured.filter((r) => r.games !== 6000 || r.transport.startsWith("floor"));
    const byId = Object.fromEntries(judgeEngineGoals(inputs(rows)).map((g) => [g.id, g]));
    expect(byId["cpu"]!.why).toBe("no 6,000-game step on the setTimeout clock in this run");
    expect(byId["lateness-precise"]!.why).toBe("no 6,000-game step on the precise clock in this run");
  });

  it("renders one row per goal: goal, figure, floor, ratio, limit, status; and one line each for the goals table", () => {
    const goals = judgeEngineGoals(inputs(measured));
    const table = goalTable(goals);
    expect(table.headers).toEqual(["Goal", "This run", "Floor (same run)", "÷ floor", "Limit", "Status"]);
    expect(table.rows).toHaveLength(6);
    for (const r of table.rows) expect(r).toHaveLength(table.headers.length);
    expect(table.rows[1]!.slice(0, 5)).toEqual([goals[1]!.goal, "5,400 µs", "timer floor, 6,000 idle tasks, p99: 5,000 µs", "1.08×", "≤ 5,500 µs"]);
    expect(table.rows[1]![5]).toMatch(/^met \(the floor alone is past 2 ms/);
    expect(table.rows[3]!.slice(1)).toEqual(["50", "loopback floor (plain TCP, no engine): 100", "0.500×", "≥ 80", "missed"]);
    expect(table.rows[5]!.slice(2, 4)).toEqual(["none: an absolute goal", "–"]);
    const results = asGoalResults(goals);
    expect(results.map((g) => g.met)).toEqual([true, true, false, false, false, false]);
    expect(results[0]!.measured).toBe("3.50 µs; core work (tight loop) 0.500 µs (7.00× it); limit ≤ 4 µs");
  });
});

describe("capacities", () => {
  it("counts only the stepped rows: a goal step past the stepping never sets the maximum", () => {
    const rows = [
      row({ transport: "memory", clock: "timers", games: 1000 }),
      row({ transport: "memory", clock: "timers", games: 1500, pass: false }),
      row({ transport: "memory", clock: "timers", games: 6000, counted: false }),
    ];
    const plan = { memory: [1000, 1500, 2000], sharded: [2000], stream: [100], streamBelow: [50, 25] } as unknown as Parameters<typeof capacities>[1];
    const caps = capacities(rows, plan, [], undefined);
    expect(caps.memMax).toBe(1000);
    expect(caps.memText).toBe("1,000");
  });
});
