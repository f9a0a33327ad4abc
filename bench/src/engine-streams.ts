// Section 3b: the engine over a real stream link, clients in another process, each link variant in
// turn (the loopback floor first), stepping up after one game alone (the link table's first row).
import { mkdtemp, rm } from "node:fs/promises";
import { join } from "node:path";
import { ENGINE_NODE_FLAGS } from "@flaplab/component";
import { ENGINE_CLOCK_ENV } from "@flaplab/engine";
import { planSurvival } from "@flaplab/simulator";
import { EASY_SEED } from "./seed.js";
import { type Child, startChild } from "./child.js";
import { type EnginePlan, type EngineRow, LATENESS_LIMIT_US, type LinkVariant, type Log, sleep, STREAM_WARMUP_GAMES, stepGames } from "./engine-plan.js";
import { goClientsUnavailable, startGoClients } from "./go-stream-clients.js";
import { loopbackBytes } from "./machine.js";
import type { ClientStats, OpenResult } from "./stream-clients.js";
import type { StreamGame, StreamServerInfo, StreamServerStats } from "./stream-server.js";
import { sig } from "./table.js";

export interface StreamResult {
  readonly rows: readonly EngineRow[];
  /** Link variants that could not run here: name → why. */
  readonly notRun: ReadonlyMap<string, string>;
}

/** One link variant: a fresh server and clients, a warm-up, one game for the link table, then the steps. */
async function measureLink(variant: LinkVariant, plan: EnginePlan, keysDir: string, flapTicks: readonly number[], log: Log): Promise<EngineRow[]> {
  const { name, link, shards, clock, clients: players, floor } = variant;
  const rows: EngineRow[] = [];
  let server: Child | undefined;
  let clients: Child | undefined;
  try {
    // Fresh processes per link: one link's garbage must not be collected in the other's steps.
    const srv = (server = await startChild(floor ? "stream-floor.ts" : "stream-server.ts", ["--expose-gc", ...ENGINE_NODE_FLAGS], clock ? { [ENGINE_CLOCK_ENV]: clock } : {}));
    const cli = (clients = players === "go" ? await startGoClients(log) : await startChild("stream-clients.ts"));
    const info = await srv.request<StreamServerInfo>({ type: "start", keysDir, shards }, 60_000);
    /** Makes `games` games, opens their streams from the clients and starts them. */
    const play = async (games: number, prefix: string): Promise<OpenResult> => {
      const made = await srv.request<StreamGame[]>({ type: "games", count: games, prefix });
      const url = link === "websocket" ? info.wsUrl : info.url;
      const opened = await cli.request<OpenResult>({ type: "open", link, url, certSha256: info.certSha256, games: made, concurrency: 16, flapTicks }, 180_000);
      await cli.request({ type: "start", rampMs: plan.rampMs }, 60_000);
      return opened;
    };
    /** Closes every game's stream and clears the server's table. */
    const endAll = async (): Promise<void> => {
      await cli.request({ type: "close" }, 60_000);
      await srv.request({ type: "clear" }, 30_000);
    };
    const step = async (games: number, stepping: boolean): Promise<boolean> => {
      const opened = await play(games, `${link}-${games}`);
      await sleep(plan.settleMs);
      await srv.request({ type: "reset" });
      await cli.request({ type: "reset" });
      const wire0 = loopbackBytes();
      await sleep(plan.streamMeasureMs);
      const s = await srv.request<StreamServerStats>({ type: "stats" }, 30_000);
      const c = await cli.request<ClientStats>({ type: "stats" }, 30_000);
      const wire1 = loopbackBytes();
      const lost = Object.values(c.closedByServer).reduce((a, b) => a + b, 0) + opened.failed;
      const pass = (s.lateness.p99 ?? Infinity) <= LATENESS_LIMIT_US && lost === 0;
      const closes = Object.entries(c.closedByServer).map(([k, v]) => `${v}× "${k}"`).join(", ");
      const note = [opened.failed > 0 ? `${opened.failed} failed to open (${opened.firstError})` : "", closes ? `closed: ${closes}` : "", stepping ? "" : "link table only"].filter(Boolean).join("; ");
      const wireBytesPerFrame = wire0 !== null && wire1 !== null && c.frames > 0 ? (wire1 - wire0) / c.frames : null;
      rows.push({ transport: "stream", link, variant: name, games, lateness: s.lateness, ticks: s.ticks, skipped: s.skipped, lost, cpuPerFrameUs: s.ticks > 0 ? s.cpuUs / s.ticks : null, pass, note, client: c, gc: s.gc, longestBurstMs: s.longestBurstMs, wireBytesPerFrame, counted: stepping });
      log(
        `  engine ${name} ${games} games (opened in ${(opened.openMs / 1000).toFixed(1)} s): lateness p50 ${sig(s.lateness.p50)} p99 ${sig(s.lateness.p99)} µs, ` +
          `${sig(s.ticks > 0 ? s.cpuUs / s.ticks : null)} µs server CPU/frame, ${sig(wireBytesPerFrame)} loopback B/frame, ` +
          `frame gap p99 ${sig(c.interArrivalStats.p99)} ms, input→ack median ${sig(c.inputToAck.median)} ms${note ? `; ${note}` : ""}`,
      );
      await endAll();
      return pass;
    };
    // Warm-up, not measured: the server's JIT optimizes the stream path under load first, as it
    // has in a server that has run a while (measured at once, 100 games spent ≈ 15 % of the
    // server's CPU compiling and ran ≈ 30 % more CPU per frame than after 8 s).
    if (plan.streamWarmupMs > 0 && !floor) {
      await play(STREAM_WARMUP_GAMES, `${link}-warmup`);
      await sleep(plan.streamWarmupMs);
      await endAll();
    }
    await step(1, false);
    await stepGames(plan.stream, plan.streamBelow, (games) => step(games, true));
  } finally {
    await clients?.stop();
    await server?.stop();
  }
  return rows;
}

/** Every variant of `variants` in turn; the Go-client ones are left out, saying why, where Go is missing. */
export async function measureStreams(plan: EnginePlan, variants: readonly LinkVariant[], workDir: string, log: Log): Promise<StreamResult> {
  const dir = await mkdtemp(join(workDir, "streams-"));
  /** The flap schedule, for the Go clients (the Node clients plan it themselves). */
  const flapTicks = planSurvival(EASY_SEED).flapTicks;
  const notRun = new Map<string, string>();
  const rows: EngineRow[] = [];
  try {
    const goMissing = variants.some((v) => v.clients === "go") ? await goClientsUnavailable() : null;
    for (const variant of variants) {
      if (variant.clients === "go" && goMissing !== null) {
        notRun.set(variant.name, goMissing);
        log(`  engine ${variant.name}: not run (${goMissing})`);
        continue;
      }
      rows.push(...(await measureLink(variant, plan, dir, flapTicks, log)));
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  return { rows, notRun };
}
