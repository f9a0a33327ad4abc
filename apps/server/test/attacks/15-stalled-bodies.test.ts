// Attack: call requests whose body never comes. One h2c connection, no token, opens 80 (here 140) POST
// streams and never sends a body; or 70 HTTP/1.1 sockets send a request's headers and stop. Before,
// a call took one of the 64 call slots when its headers arrived and waited for its body with no
// deadline (300 s on HTTP/1.1), and the h2c idle timer counted a session with open streams as
// busy: every other client's calls waited 2 s and were shed resource_exhausted. Now a call takes a
// slot only once its body is in, the body has its own deadline (FLAPLAB_BODY_TIMEOUT_MS, 1.5 s
// here), one connection and one address hold a bounded share of calls, and a session whose streams
// are all stalled is idle.
import { spawn } from "node:child_process";
import { connect as connectH2, type ClientHttp2Stream } from "node:http2";
import { connect as connectTcp, type Socket } from "node:net";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMonolith, type Monolith } from "./credentials-harness.js";

const BODY_TIMEOUT_MS = 1500;
const IDLE_MS = 2500;
/** What the server may take beyond a timeout (timer checks, a loaded machine). */
const SLACK_MS = 2500;
const PATH = "/flaplab.initiator.v1.InitiatorService/StartGame";

let m: Monolith;

beforeAll(async () => {
  m = await startMonolith({ hostLimits: { bodyTimeoutMs: BODY_TIMEOUT_MS, idleTimeoutMs: IDLE_MS } });
}, 60_000);

afterAll(async () => {
  await m?.stop();
});

/** `n` StartGame calls without a token from another address, one after the other: each one's answer and time. */
async function victimCalls(n: number): Promise<Array<{ code: string; ms: number }>> {
  const client = createClient(InitiatorService, createConnectTransport({ baseUrl: m.baseUrl, httpVersion: "1.1", nodeOptions: { localAddress: "127.0.0.2" } }));
  const out: Array<{ code: string; ms: number }> = [];
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    try {
      await client.startGame({}, { timeoutMs: 10_000 });
      out.push({ code: "ok", ms: performance.now() - t0 });
    } catch (err) {
      out.push({ code: Code[ConnectError.from(err).code]!, ms: performance.now() - t0 });
    }
  }
  return out;
}

const summary = (calls: Array<{ code: string; ms: number }>) =>
  `${JSON.stringify(calls.reduce<Record<string, number>>((acc, c) => Object.assign(acc, { [c.code]: (acc[c.code] ?? 0) + 1 }), {}))}, slowest ${Math.max(...calls.map((c) => c.ms)).toFixed(0)} ms`;

/** Resolves with the ms until `stream` closes, or -1 after `withinMs`. */
function closeTime(emitter: { once(event: "close", fn: () => void): unknown }, withinMs: number): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(-1), withinMs);
    emitter.once("close", () => {
      clearTimeout(timer);
      resolve(performance.now() - t0);
    });
  });
}

describe("calls whose body never comes", () => {
  it("140 stalled streams on one h2c connection hold no call slot, are cut at the body deadline, and the session is closed as idle", async () => {
    const session = connectH2(m.baseUrl);
    session.on("error", () => {});
    const sessionClosed = closeTime(session, IDLE_MS + BODY_TIMEOUT_MS + 3 * SLACK_MS);
    await new Promise<void>((resolve) => session.once("connect", () => resolve()));
    const open = (): ClientHttp2Stream => {
      const stream = session.request({ ":method": "POST", ":path": PATH, "content-type": "application/json" }, { endStream: false });
      stream.on("error", () => {});
      stream.resume();
      return stream;
    };
    const stalled = Array.from({ length: 140 }, open);
    const cut = stalled.map((s) => closeTime(s, BODY_TIMEOUT_MS + SLACK_MS));
    await new Promise((r) => setTimeout(r, 100));
    const during = await victimCalls(20);
    const stats = await m.server.host.stats();
    console.log(`[h2c] 140 stalled streams: another client's 20 calls → ${summary(during)}; server: ${JSON.stringify(stats)}`);
    expect(during.every((c) => c.code === "Unauthenticated")).toBe(true);
    expect(Math.max(...during.map((c) => c.ms))).toBeLessThan(1000);
    expect(stats.inFlight).toBe(0);
    // The connection's share of the calls (128) bounds what it holds at all: the rest are shed at once.
    expect(stats.receiving).toBe(128);
    expect(stats.shed["connection-share"]).toBe(12);
    const cutMs = await Promise.all(cut);
    console.log(`[h2c] stalled streams closed by the server after ${Math.min(...cutMs).toFixed(0)}–${Math.max(...cutMs).toFixed(0)} ms (body deadline ${BODY_TIMEOUT_MS} ms)`);
    expect(cutMs.every((ms) => ms >= 0)).toBe(true);
    // The attacker keeps opening stalled streams: the session has no call in progress all along, and the idle timer closes it.
    const keepStalling = setInterval(() => {
      if (!session.closed && !session.destroyed) open();
    }, 500);
    const closedMs = await sessionClosed;
    clearInterval(keepStalling);
    console.log(`[h2c] session with only stalled streams closed after ${closedMs.toFixed(0)} ms (idle timeout ${IDLE_MS} ms)`);
    expect(closedMs).toBeGreaterThan(0);
    expect((await m.server.host.stats()).closedConnections["idle-h2c"]).toBeGreaterThanOrEqual(1);
  }, 30_000);

  it("70 HTTP/1.1 sockets that send headers and no body hold no call slot and are closed at the body deadline", async () => {
    const sockets = await Promise.all(
      Array.from(
        { length: 70 },
        () =>
          new Promise<Socket>((resolve, reject) => {
            const s = connectTcp({ port: m.server.port, host: "127.0.0.1", localAddress: "127.0.0.3" }, () => {
              s.write(`POST ${PATH} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 10\r\n\r\n`);
              resolve(s.resume());
            });
            s.once("error", reject);
          }),
      ),
    );
    const closed = sockets.map((s) => closeTime(s, BODY_TIMEOUT_MS + SLACK_MS));
    await new Promise((r) => setTimeout(r, 100));
    const during = await victimCalls(20);
    console.log(`[h1] 70 stalled requests: another client's 20 calls → ${summary(during)}`);
    expect(during.every((c) => c.code === "Unauthenticated")).toBe(true);
    expect(Math.max(...during.map((c) => c.ms))).toBeLessThan(1000);
    const closedMs = await Promise.all(closed);
    console.log(`[h1] stalled sockets closed after ${Math.min(...closedMs).toFixed(0)}–${Math.max(...closedMs).toFixed(0)} ms`);
    expect(closedMs.every((ms) => ms >= 0)).toBe(true);
  }, 30_000);

  it("curl (HTTP/2 prior knowledge) uploading a body that never comes is cut at the body deadline", async () => {
    const cutBefore = (await m.server.host.stats()).closedConnections["body-timeout"] ?? 0;
    const t0 = performance.now();
    // -T - streams the body from stdin: one byte of it, then nothing.
    const curl = spawn("curl", ["-sS", "--http2-prior-knowledge", "-X", "POST", "-H", "content-type: application/json", "-T", "-", "-m", "20", `${m.baseUrl}${PATH}`], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    curl.stdin.write("{");
    let stderr = "";
    curl.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => curl.once("exit", resolve));
    // curl blocks reading its stdin, so it learns of the reset only when that ends: ask the server.
    let cutMs = -1;
    while (performance.now() - t0 < BODY_TIMEOUT_MS + SLACK_MS) {
      if (((await m.server.host.stats()).closedConnections["body-timeout"] ?? 0) > cutBefore) {
        cutMs = performance.now() - t0;
        break;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    curl.stdin.end();
    const code = await exited;
    console.log(`[curl] stream cut by the server after ${cutMs.toFixed(0)} ms; curl then exited ${code}: ${stderr.trim()}`);
    expect(cutMs).toBeGreaterThanOrEqual(BODY_TIMEOUT_MS - 100);
    // 92: an HTTP/2 stream error (the server's RST_STREAM), not an answer.
    expect(code).toBe(92);
  }, 30_000);
});
