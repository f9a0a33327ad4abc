import { describe, expect, it } from "vitest";
import { PRICES_US_EAST_1 } from "@flaplab/infra";
import { capacityPlan } from "../src/whatif/capacity.js";
import { MODEL_FORMAT, type WhatifModel } from "../src/whatif/model.js";
import { splitLayout } from "../src/whatif/placements.js";

const cpu = (component: string, perGameUs: number, perGameSecondUs: number) => ({ component, runs: 2, idleUsPerSecond: null, startUs: null, perGameUs, perGameSecondUs, perCallUs: null, calls: "" });

/** Games of 50 s; round CPU figures. */
const model: WhatifModel = {
  format: MODEL_FORMAT,
  study: "hand-made",
  fittedOn: [],
  seeds: ["1", "2"],
  gameSeconds: { "1": 20, "2": 80 },
  actions: [],
  metrics: {},
  cpu: [cpu("auth", 500_000, 0), cpu("worldgen", 10_000, 0), cpu("engine", 0, 10_000), cpu("initiator", 5_000, 0), cpu("music", 0, 1_000), cpu("score", 1_000, 0)],
};

const here = { region: "us-east-1", zone: "a" };
const layout = splitLayout({ auth: here, worldgen: here, engine: here, initiator: here, music: here, score: here });

describe("capacity", () => {
  it("turns players online into cores, vCPU at the target, tasks of infra's size and their cost", () => {
    const plan = capacityPlan(model, layout, 1000, 0.5);
    expect(plan.gameSeconds).toBe(50);
    expect(plan.gamesPerSecond).toBe(20);
    const row = (g: string) => plan.rows.find((r) => r.group === g)!;
    // auth: 20 logins a second × 0.5 s = 10 cores; at 50 % 20 vCPU; its task is 1 vCPU (scrypt's peak).
    expect(row("auth")).toMatchObject({ cores: 10, vcpu: 20, tasks: 20, size: { cpu: "1 vCPU", memory: "2 GB" } });
    // engine: 1000 games × 10 ms a second = 10 cores → 20 vCPU → 20 engines of 1 vCPU.
    expect(row("engine")).toMatchObject({ cores: 10, vcpu: 20, tasks: 20 });
    expect(plan.engines).toBe(20);
    // music: 1 core → 2 vCPU, in 0.5 vCPU tasks: 4, but music keeps one task.
    expect(row("music")).toMatchObject({ cores: 1, vcpu: 2, tasks: 4, size: { cpu: "0.5 vCPU" } });
    expect(row("music").note).toMatch(/keeps one task/);
    // score: 20 × 1 ms = 0.02 cores: one task.
    expect(row("score").tasks).toBe(1);
    const vcpuLine = plan.cost.lines.find((l) => l.item === "Fargate vCPU")!;
    const vcpu = plan.rows.reduce((s, r) => s + r.tasks * Number.parseFloat(r.size.cpu), 0);
    expect(vcpuLine.quantity).toBe(vcpu);
    expect(vcpuLine.usdPerHour).toBeCloseTo(vcpu * PRICES_US_EAST_1.fargateVcpuHour, 9);
    expect(plan.cost.usdPerHour).toBeCloseTo(plan.cost.lines.reduce((s, l) => s + l.usdPerHour, 0), 9);
    // Twenty engines keep their games' snapshots in one store.
    expect(plan.cost.lines.filter((l) => l.item.startsWith("ElastiCache"))).toHaveLength(1);
  });

  it("refuses engines outside the initiator's region when it needs several", () => {
    const apart = splitLayout({ auth: here, worldgen: here, engine: { region: "eu-west-1", zone: "a" }, initiator: here, music: here, score: here });
    expect(() => capacityPlan(model, apart, 1000, 0.5)).toThrow(/must be in one region/);
    expect(capacityPlan(model, apart, 10, 0.5).engines).toBe(1);
  });

  it("needs twice the tasks at half the target", () => {
    const a = capacityPlan(model, layout, 1000, 0.5).rows.find((r) => r.group === "engine")!;
    const b = capacityPlan(model, layout, 1000, 0.25).rows.find((r) => r.group === "engine")!;
    expect(b.tasks).toBe(2 * a.tasks);
  });

  it("adds each task's idle background, and the tasks it needs then", () => {
    const idle = { ...model, cpu: model.cpu.map((c) => (c.component === "engine" ? { ...c, idleUsPerSecond: 100_000 } : c)) };
    // 10 cores of games and 0.1 core idle per task of 1 vCPU at 50 %: n tasks hold 10 + 0.1 n ≤ 0.5 n from n = 25.
    const row = capacityPlan(idle, layout, 1000, 0.5).rows.find((r) => r.group === "engine")!;
    expect(row.tasks).toBe(25);
    expect(row.cores).toBeCloseTo(12.5, 9);
  });
});
