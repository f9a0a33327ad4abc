// Attack: EngineService.StartGame with a world of 10,000 pipes (≈ 590 KiB per game; at the
// 10,000-game cap more than V8's heap) or with gaps no bird can miss. The engine now accepts only
// worlds the world generator could make (WORLD_LIMITS of @flaplab/worldgen): at most 100 pipes,
// every gap inside the viewport, spacing up to half its width. Even a component credential (what
// the initiator calls with) cannot create anything else.
import { EngineService } from "@flaplab/contracts/engine/v1/engine_pb";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { WORLD_LIMITS } from "@flaplab/worldgen";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outcome, startMonolith, type Monolith } from "./credentials-harness.js";

let m: Monolith;
let token: string;
let asInitiator: string;

beforeAll(async () => {
  m = await startMonolith();
  token = await m.register("mallory");
  asInitiator = await (await m.keys()).components.tokenFor("initiator", "engine", "mallory");
}, 60_000);

afterAll(async () => {
  await m?.stop();
});

const viewport = { width: 480, height: 640 };
const pipes = (n: number, gap = { gapStart: 100, gapHeight: 300 }) => Array.from({ length: n }, () => gap);

const worlds = {
  "10,000 pipes": { seed: 1n, viewport, pipeSpacing: 191, pipes: pipes(10_000) },
  "101 pipes": { seed: 1n, viewport, pipeSpacing: 191, pipes: pipes(101) },
  "gaps 2e9 px tall": { seed: 1n, viewport, pipeSpacing: 191, pipes: pipes(100, { gapStart: -1e9, gapHeight: 2e9 }) },
  "gaps taller than the viewport": { seed: 1n, viewport, pipeSpacing: 191, pipes: pipes(100, { gapStart: 0, gapHeight: 10_000 }) },
  "negative gaps": { seed: 1n, viewport, pipeSpacing: 191, pipes: pipes(100, { gapStart: 50, gapHeight: -10 }) },
  "a spacing of 1e9": { seed: 1n, viewport, pipeSpacing: 1e9, pipes: pipes(100) },
  "a viewport of 60000 px": { seed: 1n, viewport: { width: 60_000, height: 60_000 }, pipeSpacing: 191, pipes: pipes(100) },
};

const expected: Record<keyof typeof worlds, RegExp> = {
  "10,000 pipes": /world has 10000 pipes, more than 100/,
  "101 pipes": /world has 101 pipes, more than 100/,
  "gaps 2e9 px tall": /pipe 0 has a gap outside the 640 px viewport/,
  "gaps taller than the viewport": /pipe 0 has a gap outside the 640 px viewport/,
  "negative gaps": /pipe 0 has a gap outside/,
  "a spacing of 1e9": /pipe spacing must be from 0 to 240 px/,
  "a viewport of 60000 px": /viewport width must be a whole number from 4 to 10000/,
};

describe("a world the world generator could not have made", () => {
  for (const protocol of ["connect", "grpc"] as const) {
    it(`is refused with invalid_argument and a clear message, even with a component credential (${protocol})`, async () => {
      const engine = m.client(EngineService, protocol, { authorization: `Bearer ${asInitiator}` });
      for (const [what, world] of Object.entries(worlds) as [keyof typeof worlds, (typeof worlds)[keyof typeof worlds]][]) {
        const gameId = `huge-${protocol}-${what.replace(/[^a-z0-9]+/gi, "-")}`;
        const refused = await engine.startGame({ gameId, world, bird: { width: 34, height: 24 } }).then(
          () => undefined,
          (err: unknown) => err,
        );
        expect(await outcome(Promise.reject(refused)), what).toBe("invalid_argument");
        expect(String((refused as Error).message), what).toMatch(expected[what]);
        expect(m.server.mounted.games!.has(gameId), what).toBe(false);
      }
    });
  }

  it("leaves the generator's own worlds playable, and every game in the table at most 100 pipes", async () => {
    const engine = m.client(EngineService, "grpc", { authorization: `Bearer ${asInitiator}` });
    const fair = { seed: 1n, viewport, pipeSpacing: 240, pipes: pipes(100, { gapStart: 0, gapHeight: 640 }) };
    expect(await outcome(engine.startGame({ gameId: "fair-world", world: fair, bird: { width: 34, height: 24 } }))).toBe("ok");
    const game = await m.client(InitiatorService, "connect", { authorization: `Bearer ${token}` }).startGame({});
    expect(game.pipesInView).toBeGreaterThan(0);
    const table = m.server.mounted.games!;
    expect(table.has(game.gameId)).toBe(true);
    for (const g of table) expect(g.state.course.pipes.length).toBeLessThanOrEqual(WORLD_LIMITS.maxPipes);
    expect((await fetch(`${m.baseUrl}/healthz`)).status).toBe(200);
  });
});
