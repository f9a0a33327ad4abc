import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { COMPONENT_NAMES, type ComponentName } from "@flaplab/component";
import { describe, expect, it } from "vitest";
import { AuthService } from "../../packages/platform/contracts/src/gen/flaplab/auth/v1/auth_pb.js";
import { EngineService } from "../../packages/platform/contracts/src/gen/flaplab/engine/v1/engine_pb.js";
import { InitiatorService } from "../../packages/platform/contracts/src/gen/flaplab/initiator/v1/initiator_pb.js";
import { MusicService } from "../../packages/platform/contracts/src/gen/flaplab/music/v1/music_pb.js";
import { ScoreService } from "../../packages/platform/contracts/src/gen/flaplab/score/v1/score_pb.js";
import { WorldGenService } from "../../packages/platform/contracts/src/gen/flaplab/worldgen/v1/worldgen_pb.js";
import { BROWSER_CONNECT, CALL_GRAPH, CONNECT_SERVICES, STREAM_PATHS } from "../src/index.js";

const REPO = resolve(import.meta.dirname, "../..");

describe("what the plan knows about the components", () => {
  it("has the call graph the server wires (apps/server/src/components.ts)", async () => {
    const source = await readFile(resolve(REPO, "apps/server/src/components.ts"), "utf8");
    const wired = [...source.matchAll(/runtime\.client\((\w+)Component,\s*"(\w+)"(?:,[^)]*)?\)/g)].map((m) => `${m[2]}->${m[1]}`);
    expect(wired.length).toBeGreaterThan(0);
    const planned = COMPONENT_NAMES.flatMap((caller) => CALL_GRAPH[caller].map((callee) => `${caller}->${callee}`));
    expect(planned.sort()).toEqual([...new Set(wired)].sort());
  });

  it("has the server's stream paths", async () => {
    const source = await readFile(resolve(REPO, "apps/server/src/stream-urls.ts"), "utf8");
    expect(source).toContain(`ENGINE_STREAM_PATH = "${STREAM_PATHS.engine}"`);
    expect(source).toContain(`MUSIC_STREAM_PATH = "${STREAM_PATHS.music}"`);
  });

  it("has the proto service names the Connect routes use", () => {
    const services: Record<ComponentName, { typeName: string }> = {
      auth: AuthService,
      worldgen: WorldGenService,
      engine: EngineService,
      initiator: InitiatorService,
      music: MusicService,
      score: ScoreService,
    };
    for (const c of COMPONENT_NAMES) expect(CONNECT_SERVICES[c]).toBe(services[c].typeName);
  });

  it("makes public the Connect services the web client's config names", async () => {
    const source = await readFile(resolve(REPO, "apps/web/src/config.ts"), "utf8");
    const keys = [...source.matchAll(/readonly (\w+)Url: string;/g)].map((m) => m[1]);
    expect([...BROWSER_CONNECT].sort()).toEqual([...new Set(keys)].sort());
  });
});
