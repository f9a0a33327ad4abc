import { createServer, type Server } from "node:http";
import { createSigner, loadOrCreateKeys } from "@flaplab/identity";
import { CloseCode, type StreamSession } from "@flaplab/game-protocol";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { createWebSocketStreams, type HandedOffSession, type WebSocketStreams } from "../src/index.js";
import { echoRoute, testPlayer } from "./fixtures.js";

// A link whose `handoff` takes every game named "away-…" and serves it on a second link by `adopt`,
// as the engine's shards do in their own processes; the stand-in's `closed` is that session's
// (or, for games in `heldReports`, resolves only when the test lets it: a report still on its way).

const logger = pino({ level: "silent" });
let http: Server;
let link: WebSocketStreams;
let away: WebSocketStreams;
let player: Awaited<ReturnType<typeof testPlayer>>;
const tokens: Record<string, string> = {};
let base: string;
const awaySessions: StreamSession[] = [];
/** What the link asked of the stand-ins: closes, by game. */
const closeAsks: Array<{ gameId: string; code: number; reason: string }> = [];
const heldReports = new Map<string, () => void>();

beforeAll(async () => {
  player = await testPlayer();
  tokens.alice = player.token;
  const signer = createSigner({ privateKey: (await loadOrCreateKeys(player.dir)).privateKey });
  tokens.bob = (await signer.sign("bob")).token;
  away = createWebSocketStreams({ routes: { "/echo": echoRoute(awaySessions) }, authorize: player.authorize, logger });
  link = createWebSocketStreams({
    routes: { "/echo": echoRoute([]) },
    authorize: player.authorize,
    logger,
    limits: { maxSessions: 4, maxSessionsPerPlayer: 2, maxSessionsPerAddress: 3 },
    handoff: (upgrade): HandedOffSession | false => {
      if (!upgrade.gameId.startsWith("away-")) return false;
      const request = { method: upgrade.req.method ?? "GET", url: upgrade.req.url ?? upgrade.path, headers: upgrade.req.headers };
      const opening = away.adopt(request, upgrade.socket, upgrade.head, { path: upgrade.path, gameId: upgrade.gameId, principal: upgrade.principal });
      const sessionClosed = opening.then((s) => s?.closed).then(() => undefined);
      const report = new Promise<void>((resolve) => heldReports.set(upgrade.gameId, resolve));
      return {
        closed: upgrade.gameId.includes("held") ? report : sessionClosed,
        close: (code, reason) => {
          closeAsks.push({ gameId: upgrade.gameId, code, reason });
          void opening.then((s) => s?.close(code, reason));
        },
      };
    },
  });
  http = createServer((_req, res) => res.end("plain"));
  http.on("upgrade", link.handleUpgrade);
  await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
  const address = http.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  base = `ws://127.0.0.1:${address.port}`;
});

afterAll(async () => {
  await link?.close();
  await away?.close();
  await new Promise((r) => http?.close(r));
  await player?.remove();
});

interface Opened {
  readonly ws: WebSocket;
  readonly closed: Promise<{ code: number; reason: string }>;
}

/** Opens game `gameId`'s session as `who` from `localAddress`: the open session, or the HTTP status it was refused with. */
function open(gameId: string, localAddress: string, who = "alice"): Promise<Opened | number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${base}/echo?${new URLSearchParams({ gameId, token: tokens[who]! })}`, { localAddress });
    const closed = new Promise<{ code: number; reason: string }>((r) => ws.once("close", (code, reason) => r({ code, reason: reason.toString() })));
    ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.once("open", () => resolve({ ws, closed }));
    ws.once("error", (err) => (ws.readyState === WebSocket.CLOSED ? undefined : reject(err)));
  });
}

function opened(o: Opened | number): Opened {
  if (typeof o === "number") throw new Error(`refused with ${o}`);
  return o;
}

async function settled(what: string, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 2000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`not within 2 s: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function closeAll(sessions: readonly Opened[]): Promise<void> {
  for (const o of sessions) o.ws.close(1000);
  await Promise.all(sessions.map((o) => o.closed));
  for (const report of heldReports.values()) report();
  await settled("every session released", () => link.openSessions === 0 && link.handedOffSessions === 0);
}

describe("sessions handed off count in the link that admitted them", () => {
  it("are served by the other link and counted here as handed off, not as served here", async () => {
    const o = opened(await open("away-1", "127.0.0.1"));
    const reply = new Promise<string>((r) => o.ws.once("message", (data) => r(String(data))));
    o.ws.send(new TextEncoder().encode("hi"));
    expect(await reply).toBe("alice:away-1:hi");
    expect(awaySessions.at(-1)?.gameId).toBe("away-1");
    expect([link.openSessions, link.handedOffSessions, away.openSessions]).toEqual([0, 1, 1]);
    await closeAll([o]);
  });

  it("refuse a game's second session 409 before the upgrade while the first is away, and admit one once it has closed", async () => {
    const first = opened(await open("away-2", "127.0.0.1"));
    const served = awaySessions.length;
    expect(await open("away-2", "127.0.0.1")).toBe(409);
    expect(awaySessions.length).toBe(served);
    await closeAll([first]);
    await closeAll([opened(await open("away-2", "127.0.0.1"))]);
  });

  it("hold a session's shares until its process reports it closed, not when its socket closes", async () => {
    const o = opened(await open("away-held-1", "127.0.0.1"));
    o.ws.close(1000);
    await o.closed;
    await settled("the session closed where it is served", () => away.openSessions === 0);
    expect(link.handedOffSessions).toBe(1);
    expect(await open("away-held-1", "127.0.0.1")).toBe(409);
    heldReports.get("away-held-1")?.();
    await settled("the report to release it", () => link.handedOffSessions === 0);
    await closeAll([opened(await open("away-held-1", "127.0.0.1"))]);
  });

  it("replace the player's oldest session, here or away, with a newer one: the away one is asked to close 4430", async () => {
    // One address per session: only the player's share (2) is in play.
    const a = opened(await open("away-3", "127.0.1.1"));
    const b = opened(await open("here-3", "127.0.1.2"));
    const c = opened(await open("away-4", "127.0.1.3"));
    expect(await a.closed).toMatchObject({ code: CloseCode.LimitReached, reason: expect.stringMatching(/replaced by a newer stream session of player alice/) });
    expect(closeAsks.at(-1)).toMatchObject({ gameId: "away-3", code: CloseCode.LimitReached });
    const d = opened(await open("here-4", "127.0.1.4"));
    expect(await b.closed).toMatchObject({ code: CloseCode.LimitReached });
    const e = opened(await open("away-5", "127.0.1.5"));
    expect(await c.closed).toMatchObject({ code: CloseCode.LimitReached });
    expect(closeAsks.at(-1)).toMatchObject({ gameId: "away-4", code: CloseCode.LimitReached });
    await settled("two sessions left", () => link.openSessions + link.handedOffSessions === 2);
    expect([link.openSessions, link.handedOffSessions]).toEqual([1, 1]);
    await closeAll([d, e]);
  });

  it("give an address its share (3) over away and local sessions of all its players: 429 past it", async () => {
    const mine = [opened(await open("away-6", "127.0.2.1")), opened(await open("here-6", "127.0.2.1", "bob")), opened(await open("away-7", "127.0.2.1", "bob"))];
    expect(await open("away-8", "127.0.2.1")).toBe(429);
    expect(await open("here-8", "127.0.2.1")).toBe(429);
    expect(link.handedOffSessions).toBe(2);
    await closeAll(mine);
  });

  it("count them against maxSessions (4): 503 past it", async () => {
    const mine = [
      opened(await open("away-9", "127.0.3.1")),
      opened(await open("away-10", "127.0.3.2")),
      opened(await open("here-9", "127.0.3.3", "bob")),
      opened(await open("away-11", "127.0.3.4", "bob")),
    ];
    expect([link.openSessions, link.handedOffSessions]).toEqual([1, 3]);
    expect(await open("away-12", "127.0.3.5")).toBe(503);
    expect(await open("here-12", "127.0.3.5")).toBe(503);
    await closeAll(mine);
  });

  it("ask the away sessions to close 4500 when the link closes", async () => {
    const o = opened(await open("away-13", "127.0.0.1"));
    await link.close();
    expect(await o.closed).toEqual({ code: CloseCode.Internal, reason: "server shutting down" });
    expect(closeAsks.at(-1)).toEqual({ gameId: "away-13", code: CloseCode.Internal, reason: "server shutting down" });
  });
});
