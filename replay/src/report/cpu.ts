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
  /** Engine groups: CPU per tick frame, µs (the play's CPU where the runs split the start off). */
  readonly usPerFrame: number | null;
  /** Music groups: CPU per sound (PlayMusic call), µs (likewise). */
  readonly usPerSound: number | null;
  /**
   * What the process spends with no game on it, µs per second (timers, the stream stack's polling),
   * from the runs' idle windows; null for runs that did not watch one.
   */
  readonly idleUsPerSecond: number | null;
  /** CPU per game-second beyond the idle background (usPerGameSecond − idleUsPerSecond), µs: what one more game costs. */
  readonly netUsPerGameSecond: number | null;
  /**
   * Games one core could keep playing at once: 1 s of CPU ÷ CPU per game-second, net of the idle
   * background where the runs watched it (the starts not counted).
   */
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
        const sum = (f: (g: (typeof groups)[number]) => number | null): number | null => (groups.every((g) => f(g) !== null) ? groups.reduce((s, g) => s + f(g)!, 0) : null);
        return { cpuUs: groups.reduce((s, g) => s + g.cpuUs, 0), playCpuUs: sum((g) => g.playCpuUs), idleCpuUs: sum((g) => g.idleCpuUs) };
      }),
    );
  }
  return rows;
}

type Cpu = { readonly cpuUs: number; readonly playCpuUs: number | null; readonly idleCpuUs: number | null };

function rowOf(group: string, components: readonly string[], runs: readonly RunData[], cpuOf: (run: RunData) => Cpu | undefined): GroupCpuRow {
  let cpu = 0;
  let play = 0;
  let everyPlay = true;
  let idleUs = 0;
  let idleMs = 0;
  let everyIdle = true;
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
    const idleWindow = run.serverCpu?.idleWindowMs ?? null;
    if (used.idleCpuUs === null || idleWindow === null) everyIdle = false;
    else {
      idleUs += used.idleCpuUs;
      idleMs += idleWindow;
    }
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
  const idlePerSecond = everyIdle && counted > 0 && idleMs > 0 ? (idleUs / idleMs) * 1000 : null;
  const net = perSecond !== null && idlePerSecond !== null ? Math.max(0, perSecond - idlePerSecond) : null;
  const cost = net ?? perSecond;
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
    // Frames and sounds come during the play: per frame and per sound on the same basis as per game-second.
    usPerFrame: single === "engine" && frames > 0 ? (split ? play : cpu) / frames : null,
    usPerSound: single === "music" && sounds > 0 ? (split ? play : cpu) / sounds : null,
    idleUsPerSecond: idlePerSecond,
    netUsPerGameSecond: net,
    gamesPerCore: cost !== null && cost > 0 ? 1e6 / cost : null,
  };
}
