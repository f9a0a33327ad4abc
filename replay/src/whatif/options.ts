import { parseArgs } from "node:util";
import type { RttTable } from "@flaplab/netem";
import { WhatifInputError } from "./errors.js";
import type { ProcessChoice } from "./placements.js";
import type { PlayerShare } from "./predict.js";

// The command line of `pnpm whatif`, checked: every problem is one WhatifInputError line.

export interface WhatifOptions {
  readonly study: string;
  readonly rtt: string | undefined;
  readonly validate: boolean;
  /** --validate: each deployment of --study predicted from the others, nothing run. */
  readonly leaveOneOut: boolean;
  /** --validate: compare with this study's runs instead of running one. */
  readonly measured: string | undefined;
  /** --validate: the study's runs per trace, and its traces (the study's default when empty). */
  readonly runs: number;
  readonly traces: readonly string[];
  /** --validate: how many generated placements to run besides the repository's four. */
  readonly placements: number;
  /** --check-capacity: bot players at each level, the deployment and how long each level's bots start games. */
  readonly checkCapacity: boolean;
  readonly loadLevels: readonly number[];
  readonly deployment: string;
  readonly loadSeconds: number;
  /** --check-capacity: each level's bots' game length, s, one per level; empty: the study's mean game. */
  readonly gameLengths: readonly number[];
  /** An earlier --check-capacity's capacity-check.json: CPU under load for --players-online and --check-capacity. */
  readonly cpu: string | undefined;
  readonly players: readonly PlayerShare[];
  readonly regions: readonly string[];
  readonly zones: readonly string[];
  readonly processes: ProcessChoice;
  readonly top: number;
  readonly out: string | undefined;
  readonly modelOut: string | undefined;
  readonly playersOnline: number | undefined;
  readonly targetCpu: number;
  readonly help: boolean;
}

export function parseOptions(argv: readonly string[]): WhatifOptions {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (err) {
    throw new WhatifInputError((err as Error).message.split("\n")[0]!);
  }
  const v = parsed.values;
  if (v.help) return { ...defaults(), help: true };
  const checkCapacity = v["check-capacity"] ?? false;
  if (!checkCapacity) {
    for (const only of ["load", "deployment", "seconds", "game-lengths"] as const) if (v[only] !== undefined) throw new WhatifInputError(`--${only} goes with --check-capacity`);
  }
  if (v.cpu !== undefined && !checkCapacity && v["players-online"] === undefined) throw new WhatifInputError("--cpu goes with --players-online or --check-capacity");
  if (v.study === undefined) throw new WhatifInputError("--study <dir> is required (a folder of `pnpm study` runs)");
  const validate = v.validate ?? false;
  if (!validate && !checkCapacity && v.players === undefined) throw new WhatifInputError("--players <region=share,…> is required (e.g. us-east-1=0.7,eu-west-1=0.3), or --validate");
  for (const only of ["leave-one-out", "measured", "runs", "trace", "placements"] as const) {
    if (!validate && v[only] !== undefined) throw new WhatifInputError(`--${only} goes with --validate`);
  }
  if (v["leave-one-out"] && (v.measured !== undefined || v.runs !== undefined || v.trace !== undefined)) throw new WhatifInputError("--leave-one-out runs nothing and compares with nothing but --study: it cannot go with --measured, --runs or --trace");
  // --validate generates placements for a player in the first region (default us-east-1) over two regions and two zones.
  const players = v.players === undefined ? (validate ? [{ region: "us-east-1", weight: 1 }] : []) : parsePlayers(v.players);
  const regions = v.regions === undefined ? (validate && v.players === undefined ? ["us-east-1", "eu-west-1"] : players.map((p) => p.region)) : list(v.regions, "--regions");
  const zones = v.zones === undefined ? (validate ? ["a", "b"] : ["a"]) : list(v.zones, "--zones");
  for (const z of zones) if (!/^[a-z]$/.test(z)) throw new WhatifInputError(`--zones: "${z}" is not a zone letter (a, b, c, …)`);
  const processes = v.processes ?? "both";
  if (processes !== "split" && processes !== "merged" && processes !== "both") throw new WhatifInputError(`--processes must be split, merged or both, not "${processes}"`);
  return {
    study: v.study,
    rtt: v.rtt,
    validate,
    leaveOneOut: v["leave-one-out"] ?? false,
    measured: v.measured,
    runs: v.runs === undefined ? 3 : wholeNumber(v.runs, "--runs", 1, 100),
    traces: v.trace ?? [],
    placements: v.placements === undefined ? 4 : wholeNumber(v.placements, "--placements", 1, 20),
    checkCapacity,
    loadLevels: v.load === undefined ? [4, 8, 16] : list(v.load, "--load").map((l) => wholeNumber(l, "--load", 1, 200)),
    deployment: v.deployment ?? "microservices",
    loadSeconds: v.seconds === undefined ? 30 : wholeNumber(v.seconds, "--seconds", 5, 600),
    gameLengths: v["game-lengths"] === undefined ? [] : gameLengths(v["game-lengths"], v.load === undefined ? 3 : list(v.load, "--load").length),
    cpu: v.cpu,
    players,
    regions,
    zones,
    processes,
    top: v.top === undefined ? 5 : wholeNumber(v.top, "--top", 1, 100),
    out: v.out,
    modelOut: v["model-out"],
    playersOnline: v["players-online"] === undefined ? undefined : wholeNumber(v["players-online"], "--players-online", 1, 10_000_000),
    targetCpu: v["target-cpu"] === undefined ? 0.7 : share(v["target-cpu"], "--target-cpu"),
    help: false,
  };
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: false,
    options: {
      study: { type: "string" },
      rtt: { type: "string" },
      validate: { type: "boolean" },
      "leave-one-out": { type: "boolean" },
      measured: { type: "string" },
      runs: { type: "string" },
      trace: { type: "string", multiple: true },
      placements: { type: "string" },
      "check-capacity": { type: "boolean" },
      load: { type: "string" },
      deployment: { type: "string" },
      seconds: { type: "string" },
      "game-lengths": { type: "string" },
      cpu: { type: "string" },
      players: { type: "string" },
      regions: { type: "string" },
      zones: { type: "string" },
      processes: { type: "string" },
      top: { type: "string" },
      out: { type: "string" },
      "model-out": { type: "string" },
      "players-online": { type: "string" },
      "target-cpu": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}

function defaults(): WhatifOptions {
  return { study: "", rtt: undefined, validate: false, leaveOneOut: false, measured: undefined, runs: 3, traces: [], placements: 4, checkCapacity: false, loadLevels: [], deployment: "", loadSeconds: 30, gameLengths: [], cpu: undefined, players: [], regions: [], zones: ["a"], processes: "both", top: 5, out: undefined, modelOut: undefined, playersOnline: undefined, targetCpu: 0.7, help: false };
}

/** `us-east-1=0.7,eu-west-1=0.3`: positive shares, each region once; the shares are normalised. */
export function parsePlayers(text: string): PlayerShare[] {
  const out: PlayerShare[] = [];
  for (const part of text.split(",")) {
    const m = /^\s*([a-z0-9-]+)\s*=\s*([0-9.]+)\s*$/.exec(part);
    const weight = m ? Number(m[2]) : Number.NaN;
    if (!m || !Number.isFinite(weight) || weight <= 0) throw new WhatifInputError(`--players: "${part}" is not <region>=<share> with a share above 0 (e.g. us-east-1=0.7)`);
    if (out.some((p) => p.region === m[1])) throw new WhatifInputError(`--players: ${m[1]} is named twice`);
    out.push({ region: m[1]!, weight });
  }
  const total = out.reduce((s, p) => s + p.weight, 0);
  return out.map((p) => ({ region: p.region, weight: p.weight / total }));
}

/** Refuses a region the RTT table does not know. */
export function checkRegions(regions: readonly string[], table: RttTable, what: string): void {
  const known = Object.keys(table.regions);
  for (const r of regions) {
    if (!known.includes(r)) throw new WhatifInputError(`${what}: unknown region "${r}" (the RTT table has ${known.join(", ")})`);
  }
}

function list(text: string, what: string): string[] {
  const items = text.split(",").map((s) => s.trim());
  if (items.some((s) => s === "")) throw new WhatifInputError(`${what}: an empty item in "${text}"`);
  return [...new Set(items)];
}

function wholeNumber(text: string, what: string, min: number, max: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min || n > max) throw new WhatifInputError(`${what} must be a whole number from ${min} to ${max}, not "${text}"`);
  return n;
}

/** `--game-lengths 8,17,34`: a game length in seconds (2–300) per --load level. */
function gameLengths(text: string, levels: number): number[] {
  const lengths = text.split(",").map((t) => t.trim());
  for (const t of lengths) {
    const n = Number(t);
    if (t === "" || !Number.isFinite(n) || n < 2 || n > 300) throw new WhatifInputError(`--game-lengths: "${t}" is not a game length in seconds from 2 to 300`);
  }
  if (lengths.length !== levels) throw new WhatifInputError(`--game-lengths names ${lengths.length} lengths for ${levels} --load levels: one per level`);
  return lengths.map(Number);
}

function share(text: string, what: string): number {
  const n = Number(text);
  if (!Number.isFinite(n) || n <= 0 || n > 1) throw new WhatifInputError(`${what} must be above 0 and at most 1, not "${text}"`);
  return n;
}
