import type { Group } from "./aggregate.js";
import type { RunData } from "./load.js";

/** Game ticks per second (the engine's clock). */
export const TICKS_PER_SECOND = 30;

/**
 * What one server process (a deployment's group) cost over a deployment × seed's pooled runs that
 * recorded their servers' CPU: figures that carry to another machine better than milliseconds.
 * Each is a ratio of sums over the runs (the runs' CPU ÷ the runs' game seconds, calls, frames, …).
 */
export interface GroupCpuRow {
  readonly group: string;
  readonly components: readonly string[];
  /** Runs that recorded this group's CPU. */
  readonly runs: number;
  /** CPU per game, ms (login to game over). */
  readonly msPerGame: number;
  /** Of it, the game's start: login, StartGame and the world, up to the first input, ms; null for runs that did not split it off. */
  readonly startMsPerGame: number | null;
  /**
   * CPU per second of play (ticks ÷ 30), µs: from the game's start to game over where the runs
   * split the start off, else from the login.
   */
  readonly usPerGameSecond: number | null;
  /**
   * CPU per call a process of one component handled (calls carrying the game's id), µs: for
   * components whose work is their calls (not the engine: its work is its ticks, see usPerFrame;
   * not a process of several components, whose calls are not all its work); null otherwise.
   */
  readonly usPerCall: number | null;
  /** The methods those calls were ("GenerateWorld ×5"). */
  readonly calls: string;
  /** Engine groups: CPU per tick frame, µs. */
  readonly usPerFrame: number | null;
  /** Music groups: CPU per sound (PlayMusic call), µs. */
  readonly usPerSound: number | null;
  /** Games one core could keep playing at once: 1 s of CPU ÷ CPU per game-second (the starts not counted). */
  readonly gamesPerCore: number | null;
}

/** The CPU rows of a deployment × seed, one per server process, then "all" (the deployment's sum) when there are several. */
export function cpuRows(group: Group): GroupCpuRow[] {
  const runs = group.pooled.filter((r) => r.serverCpu !== null && r.serverCpu.groups.length > 0);
  if (runs.length === 0) return [];
  const names = [...new Set(runs.flatMap((r) => r.serverCpu!.groups.map((g) => g.group)))].sort();
  const rows = names.map((name) => {
    const components = runs.flatMap((r) => r.serverCpu!.groups.filter((g) => g.group === name)).at(0)?.components ?? [];
    return rowOf(name, components, runs, (r) => r.serverCpu!.groups.find((g) => g.group === name));
  });
  if (names.length > 1) {
    const all = [...new Set(rows.flatMap((r) => r.components))];
    rows.push(
      rowOf("all", all, runs, (r) => {
        const groups = r.serverCpu!.groups;
        const play = groups.every((g) => g.playCpuUs !== null) ? groups.reduce((sum, g) => sum + g.playCpuUs!, 0) : null;
        return { cpuUs: groups.reduce((sum, g) => sum + g.cpuUs, 0), playCpuUs: play };
      }),
    );
  }
  return rows;
}

type Cpu = { readonly cpuUs: number; readonly playCpuUs: number | null };

function rowOf(group: string, components: readonly string[], runs: readonly RunData[], cpuOf: (run: RunData) => Cpu | undefined): GroupCpuRow {
  let cpu = 0;
  let play = 0;
  let everyPlay = true;
  let counted = 0;
  let frames = 0;
  let sounds = 0;
  const calls = new Map<string, number>();
  for (const run of runs) {
    const used = cpuOf(run);
    if (used === undefined) continue;
    counted++;
    cpu += used.cpuUs;
    if (used.playCpuUs === null) everyPlay = false;
    else play += used.playCpuUs;
    frames += run.ticks ?? 0;
    for (const s of run.rpc) {
      if (s.side !== "caller" || !components.includes(s.dst)) continue;
      calls.set(s.verb, (calls.get(s.verb) ?? 0) + 1);
      if (s.dst === "music" && s.verb === "PlayMusic") sounds++;
    }
  }
  const handled = [...calls.values()].reduce((a, b) => a + b, 0);
  const split = everyPlay && counted > 0;
  const perSecond = frames > 0 ? (split ? play : cpu) / (frames / TICKS_PER_SECOND) : null;
  const single = components.length === 1 ? components[0] : undefined;
  return {
    group,
    components,
    runs: counted,
    msPerGame: counted > 0 ? cpu / counted / 1000 : 0,
    startMsPerGame: split ? (cpu - play) / counted / 1000 : null,
    usPerGameSecond: perSecond,
    usPerCall: handled > 0 && single !== undefined && single !== "engine" ? cpu / handled : null,
    calls: [...calls].map(([verb, n]) => `${verb} ×${n}`).join(", "),
    usPerFrame: single === "engine" && frames > 0 ? cpu / frames : null,
    usPerSound: single === "music" && sounds > 0 ? cpu / sounds : null,
    gamesPerCore: perSecond !== null && perSecond > 0 ? 1e6 / perSecond : null,
  };
}
