import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import type { Deployment } from "@flaplab/deployment";
import { OTLP_SPAN_KIND, type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from "@flaplab/telemetry";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTopology } from "./helpers.js";
import { EASY_SEED, playOver } from "./play.js";

// The microservices topology with tracing on, exporting OTLP/HTTP JSON to a receiver in this test:
// one game, from StartGame to RecordRun, is one trace across the processes. Also with the game on
// an engine shard process, whose calls the engine's process makes for it.
const CASES = [
  { label: "microservices", env: {} },
  { label: "microservices, the game on an engine shard", env: { FLAPLAB_ENGINE_SHARDS: "1" } },
] as const;

const SERVICE = {
  initiator: "flaplab.initiator.v1.InitiatorService",
  worldgen: "flaplab.worldgen.v1.WorldGenService",
  engine: "flaplab.engine.v1.EngineService",
  score: "flaplab.score.v1.ScoreService",
  music: "flaplab.music.v1.MusicService",
} as const;

/** The one span of `trace` in `service` named `name` of `kind` (fails on none or several). */
function only(trace: readonly ReceivedSpan[], service: string, name: string, kind: number): ReceivedSpan {
  const found = trace.filter((s) => s.serviceName === service && s.name === name && s.kind === kind);
  expect(found, `${service} ${name} kind ${kind}`).toHaveLength(1);
  return found[0]!;
}

/** The spans of `trace` in `service` named `name` of `kind` whose parent is `parent`. */
function childrenOf(trace: readonly ReceivedSpan[], parent: ReceivedSpan, service: string, name: string, kind: number): ReceivedSpan[] {
  return trace.filter((s) => s.parentSpanId === parent.spanId && s.serviceName === service && s.name === name && s.kind === kind);
}

for (const c of CASES) {
  describe(`tracing on (OTEL_EXPORTER_OTLP_ENDPOINT), ${c.label}`, () => {
    let receiver: OtlpReceiver;
    let deployment: Deployment | undefined;
    let url: (group: string) => string;
    let register: (username: string) => Promise<string>;

    beforeAll(async () => {
      receiver = await startOtlpReceiver();
      // Set here on the processes: the test runner passes no OTEL_* variables of its own.
      ({ deployment, url, register } = await startTopology("microservices", {
        OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
        OTEL_TRACES_EXPORTER: "otlp",
        OTEL_TRACES_SAMPLER: "parentbased_always_on",
        OTEL_SERVICE_NAME: "",
        OTEL_SDK_DISABLED: "false",
        OTEL_BSP_SCHEDULE_DELAY: "200",
        ...c.env,
      }));
    }, 90_000);

    afterAll(async () => {
      await deployment?.stop();
      await receiver?.close();
    });

    it("exports one trace per game, from StartGame through every hop to RecordRun", async () => {
      const token = await register("traced");
      const initiator = createClient(InitiatorService, createConnectTransport({ baseUrl: url("initiator"), httpVersion: "1.1" }));
      const game = await initiator.startGame({ seed: EASY_SEED }, { headers: { authorization: `Bearer ${token}` } });
      // No flaps: the bird falls, the game ends in a few seconds and the engine records the run.
      const played = await playOver(game, []);
      expect(played.summary).toMatchObject({ recorded: true });
      // With shards, the engine process listed its shard processes when it started.
      if ("FLAPLAB_ENGINE_SHARDS" in c.env) expect(deployment!.lines.some((l) => l.includes('"engineShards":['))).toBe(true);
      // Stopping flushes every process's spans.
      await deployment!.stop();
      deployment = undefined;

      // The one game started: the one StartGame the initiator served, a root span (the test sent no traceparent).
      const roots = receiver.spans.filter((s) => s.name === `${SERVICE.initiator}/StartGame` && s.kind === OTLP_SPAN_KIND.server);
      expect(roots).toHaveLength(1);
      const root = roots[0]!;
      expect(root.serviceName).toBe("flaplab-initiator");
      expect(root.parentSpanId).toBe("");
      // Named by the game it made, to find the trace of a game by its id.
      expect(root.attributes["flaplab.game.id"]).toBe(game.gameId);
      const trace = receiver.spans.filter((s) => s.traceId === root.traceId);

      // The initiator's calls: GenerateWorld and the engine's StartGame, children of its StartGame.
      const worldClient = only(trace, "flaplab-initiator", `${SERVICE.worldgen}/GenerateWorld`, OTLP_SPAN_KIND.client);
      expect(worldClient.parentSpanId).toBe(root.spanId);
      expect(worldClient.attributes).toMatchObject({
        "rpc.system": "connect_rpc",
        "rpc.service": SERVICE.worldgen,
        "rpc.method": "GenerateWorld",
        "flaplab.call.mode": "networked",
        "flaplab.caller": "initiator",
        "flaplab.callee": "worldgen",
        "flaplab.game.id": game.gameId,
      });
      const worldServer = only(trace, "flaplab-worldgen", `${SERVICE.worldgen}/GenerateWorld`, OTLP_SPAN_KIND.server);
      expect(worldServer.parentSpanId).toBe(worldClient.spanId);

      const engineClient = only(trace, "flaplab-initiator", `${SERVICE.engine}/StartGame`, OTLP_SPAN_KIND.client);
      expect(engineClient.parentSpanId).toBe(root.spanId);
      expect(engineClient.attributes).toMatchObject({ "flaplab.call.mode": "networked", "flaplab.callee": "engine", "flaplab.callee.group": "engine" });
      const engineServer = only(trace, "flaplab-engine", `${SERVICE.engine}/StartGame`, OTLP_SPAN_KIND.server);
      expect(engineServer.parentSpanId).toBe(engineClient.spanId);
      expect(engineServer.attributes).toMatchObject({ "flaplab.caller": "initiator", "flaplab.caller.verb": "StartGame" });

      // The game's own calls, made by the engine while and after it ran, in the same trace.
      const recordClients = childrenOf(trace, engineServer, "flaplab-engine", `${SERVICE.score}/RecordRun`, OTLP_SPAN_KIND.client);
      expect(recordClients).toHaveLength(1);
      expect(recordClients[0]!.attributes).toMatchObject({ "flaplab.caller": "engine", "flaplab.callee": "score", "flaplab.game.id": game.gameId });
      expect(childrenOf(trace, recordClients[0]!, "flaplab-score", `${SERVICE.score}/RecordRun`, OTLP_SPAN_KIND.server)).toHaveLength(1);
      const musicClients = childrenOf(trace, engineServer, "flaplab-engine", `${SERVICE.music}/PlayMusic`, OTLP_SPAN_KIND.client);
      expect(musicClients.length).toBeGreaterThanOrEqual(1);
      for (const m of musicClients) {
        expect(childrenOf(trace, m, "flaplab-music", `${SERVICE.music}/PlayMusic`, OTLP_SPAN_KIND.server)).toHaveLength(1);
      }

      // One tree: every span but the root has its parent in the trace.
      const ids = new Set(trace.map((s) => s.spanId));
      expect(trace.filter((s) => s !== root && !ids.has(s.parentSpanId))).toEqual([]);
      // No music stream was opened for the game: music answers its PlayMusic calls not_found, and
      // their spans say so; nothing else failed.
      expect(trace.filter((s) => s.statusCode === 2 && !s.name.endsWith("/PlayMusic"))).toEqual([]);
      for (const m of musicClients) expect(m).toMatchObject({ statusCode: 2, attributes: { "rpc.connect_rpc.error_code": "not_found" } });
      expect(new Set(trace.map((s) => s.serviceName))).toEqual(
        new Set(["flaplab-initiator", "flaplab-worldgen", "flaplab-engine", "flaplab-score", "flaplab-music"]),
      );
    }, 60_000);
  });
}
