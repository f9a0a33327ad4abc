// Section 3's goals, each judged against a floor measured in the same run: absolute figures on a
// shared machine move 2× from hour to hour, what the engine adds to its floor does not.
import type { EngineClockKind } from "@flaplab/engine";
import { CPU_GOAL_US, type EngineRow, GC_GOAL_GAMES, GC_GOAL_MS, LATENESS_LIMIT_US, LATENESS_MARGIN_US, LINK_CONNECTIONS_SHARE, LINK_CPU_RATIO } from "./engine-plan.js";
import type { GoalResult } from "./section.js";
import { count, sig, type Table } from "./table.js";

/** A figure of this run, or why it has none. */
export type Figure = { readonly value: number; readonly text?: string } | { readonly missing: string };

/** `value` as a figure, or `missing` when there is none (null, undefined or not finite). */
export function figure(value: number | null | undefined, missing: string, text?: string): Figure {
  if (value === null || value === undefined || !Number.isFinite(value)) return { missing };
  return text === undefined ? { value } : { value, text };
}

export type GoalUnit = "µs" | "ms" | "connections";

export interface JudgedGoal {
  /** A stable key: cpu, lateness-timers, lateness-precise, link-connections, link-cpu, gc. */
  readonly id: string;
  readonly section: "3a" | "3b";
  readonly goal: string;
  readonly unit: GoalUnit;
  /** This run's figure. */
  readonly value: number | null;
  readonly valueText: string;
  /** What the goal is judged against, measured in the same run (null: an absolute goal). */
  readonly floorLabel: string | null;
  readonly floor: number | null;
  readonly floorText: string;
  /** value ÷ floor. */
  readonly ratio: number | null;
  /** The figure the value must not pass (at most) or must reach (at least). */
  readonly limit: number | null;
  readonly atLeast: boolean;
  readonly met: boolean | null;
  /** Why there is no verdict: a missing figure or floor. */
  readonly why?: string;
  /** Why a verdict says little this run (e.g. a floor far above what the goal is about). */
  readonly caution?: string;
}

const show = (unit: GoalUnit, value: number): string => (unit === "connections" ? count(value) : `${sig(value)} ${unit}`);
const textOf = (unit: GoalUnit, f: Figure): string => ("missing" in f ? "–" : (f.text ?? show(unit, f.value)));
const numberOf = (f: Figure | null): number | null => (f === null || "missing" in f ? null : f.value);

/** value ÷ floor, when both are there and the floor is above 0. */
export function ratioToFloor(value: number | null, floor: number | null): number | null {
  return value === null || floor === null || floor <= 0 ? null : value / floor;
}

interface GoalSpec {
  readonly id: string;
  readonly section: "3a" | "3b";
  readonly goal: string;
  readonly unit: GoalUnit;
  readonly floorLabel: string | null;
  readonly atLeast?: boolean;
  /** The limit, from the floor's figure (absolute goals ignore it); or why there is none. */
  readonly limit: (floor: number | null) => number | { readonly missing: string };
  /** Why a verdict against this floor says little, if it does. */
  readonly caution?: (floor: number) => string | undefined;
}

/** Judges `value` against `spec`'s limit, from `floor` (null: an absolute goal). */
export function judge(spec: GoalSpec, value: Figure, floor: Figure | null): JudgedGoal {
  const v = numberOf(value);
  const f = numberOf(floor);
  // An absolute limit stands without its floor; one from the floor says why the floor is missing.
  const computed = spec.limit(f);
  const limit = typeof computed === "number" || floor === null || !("missing" in floor) ? computed : floor;
  const limitValue = typeof limit === "number" ? limit : null;
  const why = "missing" in value ? value.missing : typeof limit === "number" ? undefined : limit.missing;
  const met = v === null || limitValue === null ? null : spec.atLeast ? v >= limitValue : v <= limitValue;
  const caution = f === null ? undefined : spec.caution?.(f);
  return {
    id: spec.id,
    section: spec.section,
    goal: spec.goal,
    unit: spec.unit,
    value: v,
    valueText: textOf(spec.unit, value),
    floorLabel: spec.floorLabel,
    floor: f,
    floorText: floor === null ? "–" : textOf(spec.unit, floor),
    ratio: ratioToFloor(v, f),
    limit: limitValue,
    atLeast: spec.atLeast === true,
    met,
    ...(why === undefined ? {} : { why }),
    ...(caution === undefined ? {} : { caution }),
  };
}

/** Engine CPU per frame at `games` games in memory ≤ 4 µs; the core work in a tight loop is its floor (the ratio says how much the engine adds). */
export function judgeCpu(games: number, clock: string, cpuUs: Figure, coreUs: Figure): JudgedGoal {
  return judge(
    { id: "cpu", section: "3a", goal: `engine CPU per frame at ${count(games)} games in memory (${clock}) ≤ ${CPU_GOAL_US} µs`, unit: "µs", floorLabel: "core work (tight loop)", limit: () => CPU_GOAL_US },
    cpuUs,
    coreUs,
  );
}

/** p99 lateness at `games` games in memory ≤ the p99 of as many idle tasks on the same clock + 0.5 ms. */
export function judgeLateness(games: number, clock: "timers" | "precise", p99Us: Figure, floorP99Us: Figure): JudgedGoal {
  const name = clock === "precise" ? "precise clock" : "setTimeout, the server's default clock";
  return judge(
    {
      id: `lateness-${clock}`,
      section: "3a",
      goal: `p99 tick lateness at ${count(games)} games in memory (${name}) ≤ the timer floor's p99 + ${LATENESS_MARGIN_US / 1000} ms`,
      unit: "µs",
      floorLabel: `timer floor, ${count(games)} idle tasks, p99`,
      limit: (floor) => (floor === null ? { missing: "no timer floor" } : floor + LATENESS_MARGIN_US),
      caution: (floor) => (floor > LATENESS_LIMIT_US ? `the floor alone is past ${LATENESS_LIMIT_US / 1000} ms: this clock with that many tasks, or the machine this hour, sets the p99, not the engine` : undefined),
    },
    p99Us,
    floorP99Us,
  );
}

/** The link holds ≥ 0.8× the connections the loopback floor held with p99 ≤ 2 ms (0: it held none of its steps). */
export function judgeLinkConnections(link: string, held: Figure, floorHeld: Figure): JudgedGoal {
  return judge(
    {
      id: "link-connections",
      section: "3b",
      goal: `${link}: holds ≥ ${LINK_CONNECTIONS_SHARE}× the connections the loopback floor held with p99 ≤ 2 ms`,
      unit: "connections",
      floorLabel: "loopback floor (plain TCP, no engine)",
      atLeast: true,
      limit: (floor) => (floor === null || floor <= 0 ? { missing: "the loopback floor held none of its steps: no basis to judge" } : LINK_CONNECTIONS_SHARE * floor),
    },
    held,
    floorHeld,
  );
}

/** The link's server CPU per frame at `connections` connections ≤ 1.25× the loopback floor's at as many. */
export function judgeLinkCpu(link: string, connections: number, cpuUs: Figure, floorCpuUs: Figure): JudgedGoal {
  return judge(
    {
      id: "link-cpu",
      section: "3b",
      goal: `${link}: server CPU per frame at ${count(connections)} connections ≤ ${LINK_CPU_RATIO}× the loopback floor's`,
      unit: "µs",
      floorLabel: `loopback floor, ${count(connections)} connections`,
      limit: (floor) => (floor === null ? { missing: "no loopback floor" } : LINK_CPU_RATIO * floor),
    },
    cpuUs,
    floorCpuUs,
  );
}

/** No GC pause over 1 ms at 2,000 games in memory: an absolute goal (no floor). */
export function judgeGc(maxPauseMs: Figure): JudgedGoal {
  return judge(
    { id: "gc", section: "3a", goal: `no GC pause > ${GC_GOAL_MS} ms at ${count(GC_GOAL_GAMES)} games in memory (fresh processes, the engine's Node flags)`, unit: "ms", floorLabel: null, limit: () => GC_GOAL_MS },
    maxPauseMs,
    null,
  );
}

/** A goal's limit as a cell: "≤ 5,751 µs", "≥ 80". */
export function limitText(g: JudgedGoal): string {
  if (g.limit === null) return "–";
  const limit = Number.isInteger(g.limit) ? `${count(g.limit)}${g.unit === "connections" ? "" : ` ${g.unit}`}` : show(g.unit, g.limit);
  return `${g.atLeast ? "≥" : "≤"} ${limit}`;
}

/** A goal's status as a cell: met, missed, or why it has no verdict. */
export function statusText(g: JudgedGoal): string {
  if (g.met === null) return `no verdict: ${g.why ?? "no figure"}`;
  const verdict = g.met ? "met" : "missed";
  return g.caution === undefined ? verdict : `${verdict} (${g.caution})`;
}

/** The goals as a table: goal, this run's figure, the floor (same run), the ratio, the limit, met/missed. */
export function goalTable(goals: readonly JudgedGoal[]): Table {
  return {
    headers: ["Goal", "This run", "Floor (same run)", "÷ floor", "Limit", "Status"],
    align: ["l", "r", "l", "r", "r", "l"],
    rows: goals.map((g) => [
      g.goal,
      g.valueText,
      g.floorLabel === null ? "none: an absolute goal" : `${g.floorLabel}: ${g.floorText}`,
      g.ratio === null ? "–" : `${sig(g.ratio)}×`,
      limitText(g),
      statusText(g),
    ]),
  };
}

/** The goals as the bench's goals table takes them (one line of figures each). */
export function asGoalResults(goals: readonly JudgedGoal[]): GoalResult[] {
  return goals.map((g) => ({
    section: g.section,
    goal: g.goal,
    measured: [
      g.valueText,
      g.floorLabel === null ? "" : `${g.floorLabel} ${g.floorText}${g.ratio === null ? "" : ` (${sig(g.ratio)}× it)`}`,
      g.limit === null ? "" : `limit ${limitText(g)}`,
      g.why ?? "",
      g.caution ?? "",
    ]
      .filter(Boolean)
      .join("; "),
    met: g.met,
  }));
}

/** What the section measured, as the goals read it. */
export interface EngineGoalInputs {
  readonly rows: readonly EngineRow[];
  /** Games in memory the CPU and lateness goals are read at (and idle tasks of their timer floor). */
  readonly goalGames: number;
  /** The core work in a tight loop, ns per frame. */
  readonly coreNs: number | null;
  /** The clock the server ticks on here (FLAPLAB_ENGINE_CLOCK): the CPU goal is read on it. */
  readonly serverClock: EngineClockKind;
  /** Why the goal's games have no row on a clock. */
  readonly goalMissing: Readonly<Partial<Record<EngineClockKind, string>>>;
  /** The link judged, and the loopback floor's variant name. */
  readonly link: string;
  readonly floorLink: string;
  /** Connections the link's CPU is compared at (the first stream step: both always measure it). */
  readonly linkCpuConnections: number;
  /** The fewest connections of the stream steps ("< 25" when a link held none). */
  readonly fewestConnections: number;
  /** Link variants not run here: name → why. */
  readonly notRun: ReadonlyMap<string, string>;
}

const clockLabel = (clock: EngineClockKind): string => (clock === "precise" ? "precise clock" : "setTimeout clock");

/** Picks each goal's figure and floor from the section's rows and judges them; a missing row says why. */
export function judgeEngineGoals(input: EngineGoalInputs): JudgedGoal[] {
  const { rows, goalGames } = input;
  const memoryAt = (clock: EngineClockKind) => rows.find((r) => (r.transport === "memory" || r.transport === "memory-precise") && r.clock === clock && r.games === goalGames);
  const floorAt = (clock: EngineClockKind) => rows.find((r) => (r.transport === "floor" || r.transport === "floor-precise") && r.clock === clock && r.games === goalGames);
  const noStep = (clock: EngineClockKind) => input.goalMissing[clock] ?? `no ${count(goalGames)}-game step on the ${clockLabel(clock)} in this run`;
  const cpu = memoryAt(input.serverClock);
  const goals: JudgedGoal[] = [
    judgeCpu(
      goalGames,
      clockLabel(input.serverClock),
      cpu === undefined ? { missing: noStep(input.serverClock) } : figure(cpu.cpuPerFrameUs, "no frames in the step"),
      figure(input.coreNs === null ? null : input.coreNs / 1000, "no core work measured"),
    ),
  ];
  for (const clock of ["timers", "precise"] as const) {
    const step = memoryAt(clock);
    const floor = floorAt(clock);
    goals.push(
      judgeLateness(
        goalGames,
        clock,
        step === undefined ? { missing: noStep(clock) } : figure(step.lateness.p99, "no ticks in the step"),
        floor === undefined ? { missing: `no timer floor at ${count(goalGames)} idle tasks on the ${clockLabel(clock)}` } : figure(floor.lateness.p99, "no ticks in the timer floor"),
      ),
    );
  }
  const streamRows = (variant: string) => rows.filter((r) => r.transport === "stream" && r.variant === variant && r.counted !== false);
  const held = (variant: string): Figure => {
    const why = input.notRun.get(variant);
    if (why !== undefined) return { missing: `${variant} not run (${why})` };
    const steps = streamRows(variant);
    if (steps.length === 0) return { missing: `${variant} not measured` };
    const most = Math.max(0, ...steps.filter((r) => r.pass).map((r) => r.games));
    return most === 0 ? { value: 0, text: `< ${count(input.fewestConnections)}` } : { value: most };
  };
  const cpuAt = (variant: string): Figure => {
    const why = input.notRun.get(variant);
    if (why !== undefined) return { missing: `${variant} not run (${why})` };
    const row = streamRows(variant).find((r) => r.games === input.linkCpuConnections);
    return row === undefined ? { missing: `${variant} has no step at ${count(input.linkCpuConnections)} connections` } : figure(row.cpuPerFrameUs, `${variant}: no ticks at ${count(input.linkCpuConnections)} connections`);
  };
  goals.push(judgeLinkConnections(input.link, held(input.link), held(input.floorLink)));
  goals.push(judgeLinkCpu(input.link, input.linkCpuConnections, cpuAt(input.link), cpuAt(input.floorLink)));
  const gcRuns = rows.filter((r) => r.transport === "gc-engine" && r.gc !== undefined);
  goals.push(judgeGc(gcRuns.length === 0 ? { missing: "not measured (quick run)" } : figure(Math.max(...gcRuns.map((r) => r.gc?.maxMs ?? 0)), "no pauses")));
  return goals;
}
