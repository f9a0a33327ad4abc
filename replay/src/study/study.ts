import { copyFile, mkdir, rm } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { TOPOLOGIES_DIR, type TopologyCopy, topologyOnFreePorts } from "@flaplab/deployment";
import { parseArgs } from "node:util";
import { readText } from "@flaplab/settings";
import { CHROMIUM } from "../settings.js";
import { DEPLOYMENT_ORDER } from "../report/aggregate.js";
import { generateReport } from "../report/index.js";
import {
  deploymentFolder,
  type FaultKind,
  loadTrace,
  parseFault,
  parseLink,
  ReplayUsageError,
  type ReplayOptions,
  type StreamLink,
} from "../run/options.js";
import { replayDuet } from "../run/duet.js";
import { replay } from "../run/runner.js";
import { type RunningDeployment, startStudyDeployment } from "./deployment.js";
import { faultInjector } from "./faults.js";
import { expectedPlayMs, levelFolder, LoadStartError, loadDurationMs, parseLoadLevels, playUnderLoad, traceLengthMs } from "./load-levels.js";

/** The four deployments of the study, nearest first (the report lists them in this order). */
export const STUDY_DEPLOYMENTS = DEPLOYMENT_ORDER;
export const STUDY_TRACES = ["replay/traces/6977347407732442987.csv", "replay/traces/8525333463046388971.json"] as const;

/** The deployment a fault study runs by default: one whose engine games survive their engine. */
export const FAULT_DEPLOYMENT = "microservices-sharded";

export const STUDY_USAGE = `usage: pnpm study [--runs <n>] [--out <dir>] [--deployments a,b,…] [--trace <file> …] [--retries <n>] [--warmup <n>]
                  [--chromium <path>] [--stock-scheduling] [--links webtransport,websocket]
                  [--fault <kind>@<tick>] [--tls] [--sequential | --duet <a>,<b>] [--press-on-ticks]
                  [--load <players>,<players>,… [--load-workers <n>]]
  Runs every deployment (default: ${STUDY_DEPLOYMENTS.join(", ")}) with pnpm dev, replays every trace
  (default: the easy and hard seeds in replay/traces) --runs times each in Chromium over each stream
  link (default: webtransport; runs over websocket are filed as <deployment>+websocket), and writes
  one report. Before its measured runs, each deployment plays --warmup games (default 1; 0 for none) of
  the shortest trace, filed in <out>/warmup/ and left out of the report: a freshly started deployment
  opens its connections and compiles its hot code in its first games, which start up to 2× slower.
  The deployments run side by side and take turns, round by round (run N of each in
  round N, the order rotating), so the report can pair them; --sequential runs one after the other.
  --duet a,b runs two deployments at the same time instead: each run, both play the same trace, each
  in its own browser, started together, and the report adds their press-by-press differences
  (b − a; a is usually monolith). --press-on-ticks makes the pages press at the trace's flap ticks
  on the game's tick clock instead of its times, so a trace whose outcome turns on a tick (a human
  game, replay/traces/held-out) plays the simulator's game every time.
  --fault engine-kill|engine-drain|music-kill|score-kill|link-cut@<tick> kills (SIGKILL) or drains
  (SIGTERM) the process serving each game, or cuts the browser's link to its engine for 500 ms, when
  the game reaches <tick>; the page then presses on the game's tick clock. Default deployment with a fault: ${FAULT_DEPLOYMENT}. Runs are filed as
  <deployment>+<kind>@<tick>.
  --tls makes the calls between regions go over https:// to a TLS listener in front of each callee, as
  in the cloud; runs of deployments with calls between regions are filed as <deployment>+tls.
  --load 0,100,400 adds load as a dimension: level 0 is the study as above; at each level L > 0, for each
  deployment in turn, L autopilot bots (pnpm load, WebSocket, --load-workers processes, default 1) play
  on it while its Chromium runs are played; those runs are filed as <deployment>@<L>, the bots' figures
  go to <out>/load/<deployment>@<L>/, and the report adds a Load section.`;

export interface StudyOptions {
  readonly deployments: readonly string[];
  readonly traces: readonly string[];
  readonly runs: number;
  readonly retries: number;
  readonly out: string;
  readonly chromium: string;
  /** Keep Chromium's task deferral after key presses (replay --stock-scheduling). */
  readonly stockScheduling: boolean;
  /** The stream links every deployment is replayed over, in order. */
  readonly links: readonly StreamLink[];
  /** A fault injected into every run's game. */
  readonly fault?: { readonly kind: FaultKind; readonly tick: number };
  /** Calls between regions over https://, as in the cloud (runs of deployments with such calls filed as <deployment>+tls). */
  readonly tls: boolean;
  /** One deployment after the other instead of interleaved rounds. */
  readonly sequential: boolean;
  /** The two deployments (`deployments`) play at the same time, each run. */
  readonly duet: boolean;
  /** Pages press on the game's tick clock (ReplayOptions.pressOnTicks). */
  readonly pressOnTicks: boolean;
  /** Load levels (bot players), strictly increasing; empty: no load dimension. */
  readonly loadLevels: readonly number[];
  /** The load generator's worker processes at each level. */
  readonly loadWorkers: number;
  /** Unrecorded games each deployment plays before its measured runs (`<out>/warmup/`, not in the report). */
  readonly warmup: number;
}

export function parseStudyArgs(argv: readonly string[], cwd: string, repo: string): StudyOptions {
  const values = (() => {
    try {
      return parseArgs({
        args: [...argv],
        options: {
          runs: { type: "string", default: "5" },
          out: { type: "string", default: "results/study" },
          deployments: { type: "string" },
          fault: { type: "string" },
          trace: { type: "string", multiple: true },
          retries: { type: "string", default: "0" },
          chromium: { type: "string", default: readText(process.env, CHROMIUM) ?? "/usr/bin/chromium" },
          "stock-scheduling": { type: "boolean", default: false },
          links: { type: "string", default: "webtransport" },
          tls: { type: "boolean", default: false },
          sequential: { type: "boolean", default: false },
          duet: { type: "string" },
          "press-on-ticks": { type: "boolean", default: false },
          load: { type: "string" },
          "load-workers": { type: "string" },
          warmup: { type: "string", default: "1" },
        },
      }).values;
    } catch (err) {
      throw new ReplayUsageError(`${(err as Error).message}\n${STUDY_USAGE}`);
    }
  })();
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1 || runs > 1000) throw new ReplayUsageError(`--runs must be 1…1000, got ${values.runs}`);
  const retries = Number(values.retries);
  if (!Number.isInteger(retries) || retries < 0 || retries > 10) throw new ReplayUsageError(`--retries must be 0…10, got ${values.retries}`);
  const warmup = Number(values.warmup);
  if (!/^\d+$/.test(values.warmup) || warmup > 10) throw new ReplayUsageError(`--warmup must be a whole number of games from 0 to 10, got "${values.warmup}"`);
  const fault = values.fault === undefined ? undefined : parseFault(values.fault);
  const duet = values.duet !== undefined;
  if (duet) {
    const clash = values.deployments !== undefined ? "--deployments" : values.sequential ? "--sequential" : fault ? "--fault" : null;
    if (clash) throw new ReplayUsageError(`--duet names its two deployments and cannot go with ${clash}`);
  }
  const loadLevels = values.load === undefined ? [] : parseLoadLevels(values.load);
  if (values.load !== undefined) {
    const clash = duet ? "--duet" : fault ? "--fault" : null;
    if (clash) throw new ReplayUsageError(`--load cannot go with ${clash}: the bots would play through its games`);
  }
  if (values["load-workers"] !== undefined && values.load === undefined) throw new ReplayUsageError("--load-workers goes with --load");
  const loadWorkersText = values["load-workers"] ?? "1";
  const loadWorkers = Number(loadWorkersText);
  if (!/^\d+$/.test(loadWorkersText) || loadWorkers < 1 || loadWorkers > 64) throw new ReplayUsageError(`--load-workers must be a whole number from 1 to 64, got "${loadWorkersText}"`);
  // A name is one of the repository's topologies; a file is resolved like the other paths.
  const deployments = (values.duet ?? values.deployments ?? (fault ? FAULT_DEPLOYMENT : STUDY_DEPLOYMENTS.join(",")))
    .split(",")
    .map((d) => d.trim())
    .filter(Boolean)
    .map((d) => (d.includes("/") || d.endsWith(".json") ? resolve(cwd, d) : d));
  if (duet && (deployments.length !== 2 || deployments[0] === deployments[1])) {
    throw new ReplayUsageError(`--duet needs two different deployments, as in --duet monolith,microservices; got "${values.duet}"`);
  }
  return {
    deployments,
    traces: values.trace?.map((t) => resolve(cwd, t)) ?? STUDY_TRACES.map((t) => resolve(repo, t)),
    runs,
    retries,
    out: resolve(cwd, values.out),
    chromium: values.chromium,
    stockScheduling: values["stock-scheduling"],
    links: [...new Set(values.links.split(",").map((l) => parseLink(l.trim(), "--links")))],
    ...(fault ? { fault } : {}),
    tls: values.tls,
    sequential: values.sequential,
    duet,
    pressOnTicks: values["press-on-ticks"],
    loadLevels,
    loadWorkers,
    warmup,
  };
}

/** The deployments a study has started and not yet stopped (to stop them when the study is interrupted). */
const started = new Set<RunningDeployment>();

/** Stops every deployment a running study started: for a study interrupted by a signal. */
export async function stopStudyDeployments(): Promise<void> {
  await Promise.all([...started].map((d) => d.stop()));
}

/** Deployment `i` of `n` in round `round` (0-based): the order rotates by one each round. */
export function roundOrder<T>(items: readonly T[], round: number): T[] {
  return items.map((_, i) => items[(i + round) % items.length]!);
}

/**
 * The whole study, one command, and one report with the deployments side by side. Interleaved (the
 * default): every deployment is started, then round after round each plays every trace once, in an
 * order that rotates by one each round, so run N of every deployment is measured in the same stretch
 * of the machine's time and the report pairs them. Sequential (`--sequential`): one deployment after
 * the other, all of its runs, as before. Failed runs stay in the report.
 */
export async function runStudy(opts: StudyOptions, log: (line: string) => void): Promise<{ ok: number; failed: number; report: string }> {
  const traces = await Promise.all(opts.traces.map((t) => loadTrace(t)));
  const runsDir = join(opts.out, "runs");
  let ok = 0;
  let failed = 0;
  const names = opts.deployments.map((topology) => basename(topology).replace(/\.json$/, ""));
  // A topology file is kept with the runs, so the study says what it ran (pnpm whatif reads it).
  for (const topology of opts.deployments.filter((d) => d.includes("/"))) {
    const kept = join(opts.out, "topologies", basename(topology));
    if (resolve(topology) === resolve(kept)) continue;
    await mkdir(dirname(kept), { recursive: true });
    await copyFile(topology, kept);
  }
  const start = async (i: number, topology = opts.deployments[i]!): Promise<RunningDeployment> => {
    // A topology name ("multiaz") or a topology file; runs are filed under its name.
    log(`study: deployment ${i + 1}/${opts.deployments.length}: ${names[i]} — starting`);
    const deployment = await startStudyDeployment(
      topology,
      join(opts.out, "data", names[i]!),
      (event) => {
        if (event.type !== "emulating") return;
        log(`study:   emulating ${event.emulation.edges.length} links (RTT table: ${event.rttTableDate})`);
        for (const e of event.emulation.edges) log(`study:     ${e.name.padEnd(28)} ${e.kind.padEnd(12)} RTT ${e.rttMs} ms ± ${e.jitterMs}${e.tls ? " (TLS)" : ""}`);
      },
      // A link to cut needs a proxy on it.
      { proxyBrowserLinks: opts.fault?.kind === "link-cut", tlsBetweenRegions: opts.tls },
    );
    started.add(deployment);
    void deployment.stopped.then(() => started.delete(deployment));
    return deployment;
  };
  type Started = { readonly name: string; readonly deployment: RunningDeployment };
  /** Starts every deployment side by side, each on free loopback ports (a repository topology has fixed ones), runs `body`, stops them. */
  const sideBySide = async (body: (running: readonly Started[]) => Promise<void>): Promise<void> => {
    const running: Started[] = [];
    const copies: TopologyCopy[] = [];
    try {
      for (const [i, name] of names.entries()) {
        const topology = opts.deployments[i]!;
        const copy = await topologyOnFreePorts(topology.includes("/") ? topology : join(TOPOLOGIES_DIR, `${topology}.json`));
        copies.push(copy);
        running.push({ name, deployment: await start(i, copy.file) });
      }
      await body(running);
    } finally {
      await Promise.all(running.map((d) => d.deployment.stop()));
      await Promise.all(copies.map((c) => rm(c.dir, { recursive: true, force: true })));
    }
  };
  /** What the runner needs to replay every trace `runs` times on one deployment over `link`. */
  /** "+tls" only where some call really went over TLS (a deployment with groups in several regions). */
  const tlsOf = (deployment: RunningDeployment): string => (deployment.emulation?.edges.some((e) => e.tls) ? "+tls" : "");
  const replayOptionsFor = (name: string, deployment: RunningDeployment, runs: number, link: StreamLink, level = 0): ReplayOptions => {
    const folder = levelFolder(`${deploymentFolder(name, link)}${tlsOf(deployment)}${opts.fault ? `+${opts.fault.kind}@${opts.fault.tick}` : ""}`, level);
    return {
        url: deployment.webUrl,
        traces,
        runs,
        out: runsDir,
        deployment: folder,
        retries: opts.retries,
        rpcLogs: [deployment.logsDir],
        chromium: opts.chromium,
        stockScheduling: opts.stockScheduling,
        slackMs: 15_000,
        link,
        serverCpu: () => deployment.cpuTimes(),
        pressOnTicks: opts.pressOnTicks,
        ...(opts.fault ? { fault: { ...opts.fault, inject: faultInjector(opts.fault.kind, deployment, (line) => log(`study:   ${folder}: ${line}`)) } } : {}),
    };
  };
  /** How long each deployment's Chromium runs took without load (the load's duration is chosen from it), ms. */
  const unloadedMs = new Map<string, number>();
  /** Replays every trace `runs` times on one deployment, over each link. */
  const play = async (name: string, deployment: RunningDeployment, runs: number, progress: string, level = 0): Promise<void> => {
    const t0 = performance.now();
    for (const link of opts.links) {
      const replayOptions = replayOptionsFor(name, deployment, runs, link, level);
      const result = await replay(replayOptions, (line) => log(`study:   ${replayOptions.deployment}${progress}: ${line}`));
      ok += result.ok;
      failed += result.failed;
    }
    if (level === 0) unloadedMs.set(name, (unloadedMs.get(name) ?? 0) + performance.now() - t0);
  };
  /**
   * The unrecorded games a freshly started deployment plays before its measured runs: the shortest
   * trace, over each link, filed in <out>/warmup/ (kept, not in the report, not counted). A failed
   * warm-up is logged and the measured runs go on: they are what the study is for.
   */
  const shortest = traces.reduce((a, b) => (traceLengthMs(b) < traceLengthMs(a) ? b : a));
  const warmUp = async (name: string, deployment: RunningDeployment): Promise<void> => {
    if (opts.warmup === 0) return;
    for (const link of opts.links) {
      const measured = replayOptionsFor(name, deployment, opts.warmup, link);
      const { fault: _fault, serverCpu: _cpu, ...plain } = measured;
      const result = await replay({ ...plain, traces: [shortest], out: join(opts.out, "warmup"), retries: 0 }, (line) =>
        log(`study:   ${measured.deployment} (warm-up): ${line}`),
      );
      log(`study:   ${measured.deployment}: warmed up with ${opts.warmup} unrecorded game(s), ${result.ok} ok${result.failed > 0 ? `, ${result.failed} failed (the measured runs go on)` : ""}`);
    }
  };
  /** All of a deployment's Chromium runs at `level` > 0, played while `level` bots play on it. */
  const playLoaded = async (name: string, deployment: RunningDeployment, level: number): Promise<void> => {
    const folder = levelFolder(`${name}${tlsOf(deployment)}`, level);
    const expected = unloadedMs.get(name) ?? expectedPlayMs(traces, opts.runs) * opts.links.length;
    const durationMs = loadDurationMs(expected);
    log(`study: load ${level} players on ${name}: ${opts.loadWorkers} load worker(s), bots start games for ${(durationMs / 1000).toFixed(0)} s (Chromium runs expected to take ${(expected / 1000).toFixed(0)} s)`);
    try {
      await playUnderLoad(
        {
          deployment,
          folder,
          runFolders: opts.links.map((link) => replayOptionsFor(name, deployment, 1, link, level).deployment!),
          level,
          workers: opts.loadWorkers,
          durationMs,
          dir: join(opts.out, "load", folder),
          log: (line) => log(`study:   ${folder}: ${line}`),
        },
        () => play(name, deployment, opts.runs, ` (load ${level})`, level),
      );
    } catch (err) {
      if (!(err instanceof LoadStartError)) throw err;
      // The other levels and deployments are still measured; the runs of this one count as failed.
      const notPlayed = traces.length * opts.runs * opts.links.length;
      failed += notPlayed;
      log(`study: ${err.message}; its ${notPlayed} Chromium run(s) were not played`);
    }
  };
  const levels = opts.loadLevels.length > 0 ? opts.loadLevels : [0];
  const loadedLevels = levels.filter((l) => l > 0);
  if (opts.duet) {
    await sideBySide(async (running) => {
      const [a, b] = running as [Started, Started];
      for (const d of running) await warmUp(d.name, d.deployment);
      for (const link of opts.links) {
        const pair = [replayOptionsFor(a.name, a.deployment, opts.runs, link), replayOptionsFor(b.name, b.deployment, opts.runs, link)] as const;
        log(`study: duet: ${pair[0].deployment} and ${pair[1].deployment} play each trace at the same time, ${opts.runs} times`);
        const result = await replayDuet(pair, (line) => log(`study:   duet: ${line}`));
        ok += result.ok;
        failed += result.failed;
      }
    });
  } else if (opts.sequential) {
    for (const [i, name] of names.entries()) {
      const deployment = await start(i);
      try {
        await warmUp(name, deployment);
        if (levels.includes(0)) await play(name, deployment, opts.runs, "");
        for (const level of loadedLevels) await playLoaded(name, deployment, level);
      } finally {
        await deployment.stop();
      }
    }
  } else {
    await sideBySide(async (running) => {
      for (const d of running) await warmUp(d.name, d.deployment);
      if (levels.includes(0)) {
        for (let round = 0; round < opts.runs; round++) {
          const order = roundOrder(running, round);
          log(`study: round ${round + 1}/${opts.runs}: ${order.map((d) => d.name).join(", ")}`);
          for (const d of order) await play(d.name, d.deployment, 1, ` (round ${round + 1}/${opts.runs})`);
        }
      }
      // Under load, one deployment at a time: the bots of a level play on it through all its runs.
      for (const level of loadedLevels) for (const d of running) await playLoaded(d.name, d.deployment, level);
    });
  }
  const reportDir = join(opts.out, "report");
  const { files } = await generateReport({ inputs: [runsDir], outDir: reportDir, ...(loadedLevels.length > 0 ? { load: join(opts.out, "load") } : {}) });
  log(`study: ${ok} runs ok, ${failed} failed; report: ${files.html}`);
  return { ok, failed, report: files.html };
}
