// Attack 9: many idle TCP connections (silent sockets, idle HTTP/1.1 keep-alive connections, idle
// h2c sessions) held open to exhaust the server's file descriptors. The RPC port closes a
// connection that sends nothing within the first-byte timeout and one with no call in progress
// for the idle timeout (short values here), and keeps serving.
import { connect as connectH2, type ClientHttp2Session } from "node:http2";
import { connect as connectTcp, type Socket } from "node:net";
import { createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startMonolith, type Monolith } from "./credentials-harness.js";

const FIRST_BYTE_MS = 1000;
const IDLE_MS = 2000;
/** What the server may take beyond a timeout (timer checks, a loaded machine). */
const SLACK_MS = 2500;

let m: Monolith;
let port: number;

beforeAll(async () => {
  m = await startMonolith({ hostLimits: { firstByteTimeoutMs: FIRST_BYTE_MS, idleTimeoutMs: IDLE_MS } });
  port = m.server.port;
}, 60_000);

afterAll(async () => {
  await m?.stop();
});

/** Resolves with the ms from now until `emitter` closes (rejects after `withinMs`). */
function closeTime(emitter: Socket | ClientHttp2Session, withinMs: number): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`still open after ${withinMs} ms`)), withinMs);
    emitter.once("close", () => {
      clearTimeout(timer);
      resolve(performance.now() - t0);
    });
    emitter.on("error", () => {});
  });
}

function openSocket(): Promise<Socket> {
  return new Promise((resolve, reject) => {
    // Reads (and drops) what the server sends, so that its close is seen.
    const s = connectTcp(port, "127.0.0.1", () => resolve(s.resume()));
    s.once("error", reject);
  });
}

describe("idle connections are closed by the server", () => {
  it("closes 200 silent sockets, 50 idle keep-alive connections and 100 idle h2c sessions; a real call still works", async () => {
    const silent = await Promise.all(Array.from({ length: 200 }, openSocket));
    const silentClosed = silent.map((s) => closeTime(s, FIRST_BYTE_MS + SLACK_MS));

    const keepAlive = await Promise.all(Array.from({ length: 50 }, openSocket));
    const keepAliveClosed = keepAlive.map((s) => closeTime(s, IDLE_MS + SLACK_MS + 1000));
    for (const s of keepAlive) s.write(`GET /healthz HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);

    const sessions = await Promise.all(
      Array.from({ length: 100 }, async () => {
        const session = connectH2(`http://127.0.0.1:${port}`);
        const closed = closeTime(session, IDLE_MS + SLACK_MS + 1000);
        // One call, then nothing.
        await new Promise<void>((resolve, reject) => {
          const req = session.request({ ":path": "/healthz" });
          req.on("error", reject);
          req.resume();
          req.on("end", resolve);
        });
        return closed;
      }),
    );

    const silentTimes = await Promise.all(silentClosed);
    expect(Math.min(...silentTimes)).toBeGreaterThanOrEqual(FIRST_BYTE_MS - 100);
    const keepAliveTimes = await Promise.all(keepAliveClosed);
    expect(Math.min(...keepAliveTimes)).toBeGreaterThanOrEqual(IDLE_MS - 100);
    const sessionTimes = await Promise.all(sessions);
    expect(Math.min(...sessionTimes)).toBeGreaterThanOrEqual(IDLE_MS - 100);

    const stats = await m.server.host.stats();
    expect(stats.closedConnections["first-byte-timeout"]).toBe(200);
    expect(stats.closedConnections["idle-h2c"]).toBe(100);

    // The server still serves.
    const auth = createClient(AuthService, createConnectTransport({ baseUrl: `http://127.0.0.1:${port}`, httpVersion: "2" }));
    const res = await auth.register({ username: "after-idle", password: "correct horse battery" });
    expect(res.session?.token).toBeTruthy();
  });
});
