// Section 3: how many concurrent games one engine process ticks on time, (a) with frames going to
// memory, (b) over the real stream server to headless clients; and the section's goals, each
// judged against a floor measured in the same run (3c).
import { ENGINE_NODE_FLAGS } from "@flaplab/component";
import { engineClockKindFromEnv } from "@flaplab/engine";
import { measureGcRuns } from "./engine-gc.js";
import { asGoalResults, goalTable, judgeEngineGoals } from "./engine-goals.js";
import { measureInMemory } from "./engine-memory.js";
import {
  CPU_GOAL_US,
  GC_GOAL_GAMES,
  GC_GOAL_MS,
  GC_ROUNDS,
  GOAL_LINK,
  LATENESS_MARGIN_US,
  LINK_CONNECTIONS_SHARE,
  LINK_CPU_RATIO,
  LINK_VARIANTS,
  planOf,
} from "./engine-plan.js";
import { capacities, engineTable, linkTable } from "./engine-report.js";
import { measureStreams } from "./engine-streams.js";
import type { RunOptions, SectionResult } from "./section.js";
import { count, sig } from "./table.js";

export async function runEngine(opts: RunOptions): Promise<SectionResult> {
  const started = performance.now();
  const plan = planOf(opts.quick);
  // The clock the server would tick on here (FLAPLAB_ENGINE_CLOCK; the children inherit it).
  const serverClock = engineClockKindFromEnv(process.env);
  // A variant on a clock of its own is left out when that clock is the server's (it would repeat a row).
  const linkVariants = LINK_VARIANTS.filter((v) => v.clock !== serverClock);

  const memory = await measureInMemory(plan, serverClock, opts.log);
  const gcRows = opts.quick ? [] : await measureGcRuns(plan, opts.log);
  const streams = await measureStreams(plan, linkVariants, opts.workDir, opts.log);
  const rows = [...memory.rows, ...gcRows, ...streams.rows];

  const variants = linkVariants.map((v) => v.name).filter((v) => !streams.notRun.has(v));
  // The capacities count the engine's links; the loopback floor is what the machine gives without it.
  const floorVariant = linkVariants.find((v) => v.floor && !streams.notRun.has(v.name))?.name;
  const caps = capacities(rows, plan, variants, floorVariant);
  const judged = judgeEngineGoals({
    rows,
    goalGames: plan.goalGames,
    coreNs: memory.baselines.coreNs,
    serverClock,
    goalMissing: memory.goalMissing,
    link: GOAL_LINK,
    floorLink: LINK_VARIANTS.find((v) => v.floor)!.name,
    linkCpuConnections: plan.stream[0]!,
    fewestConnections: Math.min(...plan.stream, ...plan.streamBelow),
    notRun: streams.notRun,
  });
  for (const g of judged) opts.log(`  goal: ${g.goal}: ${g.valueText} (floor ${g.floorText}) ${g.met === null ? `no verdict (${g.why})` : g.met ? "met" : "missed"}`);
  const b = memory.baselines;
  return {
    id: "engine",
    title: "3. Engine capacity (concurrent games, 33 ms ticks; lateness in µs)",
    table: engineTable(rows, b, plan, serverClock, caps, variants),
    notes: [
      `Each step starts its games evenly over ${plan.rampMs / 1000} s (so their tick phases spread over the period), waits ${plan.settleMs / 1000} s, then measures ${plan.measureMs / 1000} s; in memory, one full collection ends the wait (it promotes the objects of the games the ramp made at once, a burst a server's spread-out game starts never make). Stepping up stops at the first step over 2 ms; when the first step already fails, smaller counts are tried. When the stepping stopped below ${count(plan.goalGames)} games in memory, one more step of ${count(plan.goalGames)} runs on that clock for the goals (3c); it does not count for the maximum.`,
      `Games play the easy seed with a flap schedule planned on the physics (survives ≥ 60 s); a client flaps when the frame before the flap's tick arrives. "Lost" = games that ended during the step (a flap arrived a tick late, or a session was closed). "Back-to-back" = a game ticked twice in one scheduler timer callback, so an input sent between those ticks could not be applied in time.`,
      `In memory: the engine's game session handler, TickScheduler, GameTable, FrameEncoder and SnapshotKeeper (an in-memory snapshot store, written when a game leaves, as a server with one engine runs it) in one process, with in-memory sessions; CPU µs/frame = process CPU ÷ tick frames. Over streams: the real stream server in one process with the same handler and keeper, serving WebTransport (HTTP/2 mapping, the library's Node clients) and plain WebSocket (on an HTTP/1.1 port as the server's RPC port serves it, \`ws\` clients); the clients in another process; CPU is the server process's. "websocket, N shards": the same with the games handed to N engine shard processes (\`@flaplab/engine-shards\`, as FLAPLAB_ENGINE_SHARDS=N does), lateness the worst shard's, CPU the group's process plus its shards. "websocket, precise clock": the one-process server on the precise tick clock (FLAPLAB_ENGINE_CLOCK=precise): its ticks start ≈ 0.2 ms after their deadlines instead of 0–1 ms, for a helper thread's wake-ups.`,
      `GC goal: ${count(GC_GOAL_GAMES)} games in memory, each run in a fresh process (no heap left from the steps before), ${GC_ROUNDS} rounds; "in memory, fresh process" runs with the engine's Node flags, as a server process hosting the engine starts (${ENGINE_NODE_FLAGS.join(" ")}: at most 2 MiB per semi-space); "V8's default young generation" without them (it grows to 16 MiB per semi-space on Node 20): longer scavenges, fewer of them. The goal is judged on the engine's rounds (their longest pause).`,
      `Allocation: JS heap bytes allocated ÷ tick frames, from V8's GC statistics (heap used at the end − at the start + what each collection freed, \`v8.GCProfiler\`); in memory it includes the bench client's input messages (one per ≈ 30 frames). GC max: the longest collection pause in the measurement (perf_hooks "gc" entries).`,
      `Core work = a physics tick + delta frame + size-delimited message in a tight loop, measured in this run (best of 3 rounds); the timer floor is 100 tasks that do nothing, on the same scheduler (what its 1 ms timers and this machine alone give), and again as many as the goal's games (${count(plan.goalGames)}): the lateness that many tasks get before they do anything. Go figures are quoted references, not measured here.`,
      `Clocks: every row runs on the clock the server would (FLAPLAB_ENGINE_CLOCK, now ${serverClock}; the default is setTimeout's: whole milliseconds, so a tick starts 0–1 ms after its deadline); the "precise clock" rows run on the precise tick clock (a helper thread wakes the event loop within ≈ 0.1–0.2 ms of a deadline, at most one callback per 0.25 ms). "timer callbacks/s" = the scheduler's rounds; every round wakes a thread. Game starts sit on the scheduler's 1 ms slot grid, so there are at most ≈ 1,000 rounds a second on either clock. p99 ÷ floor is against setTimeout's floor.`,
    ],
    subsections: [
      {
        title: "3b. Client links side by side (ms; clients in another process)",
        table: linkTable(rows, variants, floorVariant, caps, plan.stream[0]!),
        notes: [
          "Frame inter-arrival: the time between two tick frames of one game at its client (33 ms when every tick is on time). Input → ack: a flap written by the client → its input ack read by it (the engine acks before anything else).",
          "Server CPU µs/frame: the stream server process's CPU ÷ tick frames. Loopback B/frame: bytes the loopback interface carried during the measurement ÷ frames the clients read (/proc/net/dev: both directions, IP and TCP headers, acknowledgements, inputs, and anything else on loopback meanwhile).",
          `1 game and ${count(plan.stream[0]!)} games are measured for every link; "(max)" is the most games the link held with p99 tick lateness ≤ 2 ms in the stepping above.`,
          "Client CPU µs/frame: the clients' process CPU ÷ tick frames it read. The clients share the machine's cores with the server, so what they spend is taken from it. \"websocket, Go clients\": the same server and link, played by bench/go-stream-clients (Go, gorilla/websocket; the same schedule, requests and measurements as the Node clients), a client nobody here wrote and a lighter one; built with Go into .tools/bin on first use.",
          "Loopback floor (plain TCP, no engine): what this machine gives any stream server before it does anything (bench/src/stream-floor.ts). One process accepts plain TCP connections; each one's first byte puts it on the engine's TickScheduler (the server's clock, its 1 ms slots), whose every tick writes one 18-byte message (a tick frame with its WebSocket header, a buffer of its own, as the WebSocket session writes a frame); the Go clients read them in another process. Its server CPU per frame is the floor under the links' (syscall and loopback TCP, both ends' wake-ups), and the most connections it held with p99 ≤ 2 ms is about the most a one-process link can hold on this machine with its clients beside it (one sample: the p99 of a given load moves from minute to minute here, so a link may pass a step its floor failed). The link goals (3c) judge the WebSocket link against it.",
          ...[...streams.notRun].map(([variant, why]) => `${variant}: not run (${why}).`),
        ],
      },
      {
        title: "3c. Goals against this run's floors",
        table: goalTable(judged),
        notes: [
          `Each goal is judged against a floor measured in this same run, on this machine at this hour: absolute figures on a shared machine move 2× from hour to hour, what the engine adds to its floor much less. ÷ floor = this run's figure ÷ the floor's.`,
          `CPU: the engine's CPU per tick frame at ${count(plan.goalGames)} games in memory on the server's clock, at most ${CPU_GOAL_US} µs; its floor is the core work in a tight loop (${sig(b.coreNs / 1000)} µs in this run): ÷ floor is what the engine path costs around it.`,
          `Lateness: p99 tick lateness at ${count(plan.goalGames)} games in memory, at most the p99 of ${count(plan.goalGames)} idle tasks on the same clock (the timer floor above) + ${LATENESS_MARGIN_US / 1000} ms, on setTimeout's clock (the server's default) and on the precise clock. The ${count(plan.goalGames)}-game step is the stepping's own when it got there, else one more step after it.`,
          `Link: "${GOAL_LINK}" (the one-process WebSocket server read by the same Go clients as the loopback floor, so that only the engine and the WebSocket framing differ) holds at least ${LINK_CONNECTIONS_SHARE}× the connections the loopback floor held with p99 ≤ 2 ms (the same steps: ${[...plan.streamBelow].reverse().concat(plan.stream).map(count).join(", ")}), and its server CPU per frame at ${count(plan.stream[0]!)} connections (the first step, which both always measure) is at most ${LINK_CPU_RATIO}× the floor's at as many.`,
          `GC: an absolute goal, no pause over ${GC_GOAL_MS} ms at ${count(GC_GOAL_GAMES)} games (the fresh-process runs with the engine's Node flags); it has no floor.`,
          `A goal without a figure (a step that failed, a link not run) says why and has no verdict.`,
        ],
      },
    ],
    goals: asGoalResults(judged),
    data: {
      rows,
      goals: judged,
      maxGamesSharded: caps.shardMax,
      coreNsPerFrame: b.coreNs,
      coreBytesPerFrame: b.coreBytes,
      libraryCore: b.library,
      tickPath: b.tickPath,
      tickPathSnapshots: b.tickPathSnapshots,
      gamesPerCoreAt30fps: 1e9 / b.coreNs / (1000 / 33),
      maxGamesMemory: caps.memMax,
      maxGamesMemoryPrecise: caps.preciseMax,
      maxGamesStream: caps.streamMax,
      maxGamesByLink: caps.streamMaxOf,
      plan,
    },
    seconds: (performance.now() - started) / 1000,
  };
}
