// Attack 11: a page on another origin calls the API from a victim's browser. The RPC port allows
// only listed origins (FLAPLAB_CORS_ORIGINS; by default the local web client and the topology's
// web address): any other origin gets no access-control-allow-origin, so the browser withholds
// the response.
import { rm } from "node:fs/promises";
import { loadTopology } from "@flaplab/runtime";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startServer, type RunningServer } from "../../src/server.js";
import { topologyOnFreePorts } from "../helpers.js";

const ROUTE = "/flaplab.auth.v1.AuthService/Register";
let server: RunningServer;
let dir: string;
let baseUrl: string;
let webOrigin: string;

beforeAll(async () => {
  const topo = await topologyOnFreePorts("monolith");
  dir = topo.dir;
  webOrigin = `http://${topo.addresses["web"]}`;
  const env = process.env["FLAPLAB_CORS_ORIGINS"];
  delete process.env["FLAPLAB_CORS_ORIGINS"];
  try {
    server = await startServer({ topology: await loadTopology(topo.file), group: "monolith", dataDir: dir, logger: pino({ level: "silent" }) });
  } finally {
    if (env !== undefined) process.env["FLAPLAB_CORS_ORIGINS"] = env;
  }
  baseUrl = `http://127.0.0.1:${server.port}`;
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

const preflight = (origin: string) =>
  fetch(baseUrl + ROUTE, {
    method: "OPTIONS",
    headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type,connect-protocol-version,authorization" },
  });

const register = (origin: string, username: string) =>
  fetch(baseUrl + ROUTE, {
    method: "POST",
    headers: { origin, "content-type": "application/json", "connect-protocol-version": "1" },
    body: JSON.stringify({ username, password: "correct horse battery" }),
  });

describe("CORS allows listed origins only", () => {
  it("does not reflect an unlisted origin, in the preflight or the call", async () => {
    const pre = await preflight("https://evil.example");
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    expect(pre.headers.get("access-control-allow-credentials")).toBeNull();
    const res = await register("https://evil.example", "cors-evil");
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    // Look-alikes of allowed origins are not allowed either.
    for (const origin of ["http://127.0.0.1:5173.evil.example", "http://evil.example/http://127.0.0.1:5173", "null", "http://127.0.0.1:5174"]) {
      expect((await preflight(origin)).headers.get("access-control-allow-origin"), origin).toBeNull();
    }
  });

  it("allows the local web client and the topology's web address", async () => {
    for (const origin of ["http://127.0.0.1:5173", "http://localhost:5173", webOrigin]) {
      const pre = await preflight(origin);
      expect(pre.status, origin).toBe(204);
      expect(pre.headers.get("access-control-allow-origin"), origin).toBe(origin);
      expect(pre.headers.get("access-control-allow-methods")).toContain("POST");
      expect(pre.headers.get("access-control-allow-headers")?.toLowerCase()).toContain("authorization");
      expect(pre.headers.get("vary")?.toLowerCase()).toContain("origin");
    }
    const res = await register(webOrigin, "cors-web");
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(webOrigin);
    expect(res.headers.get("access-control-expose-headers")?.toLowerCase()).toContain("grpc-status");
  });

  it("takes the allowed origins from FLAPLAB_CORS_ORIGINS", async () => {
    const topo = await topologyOnFreePorts("monolith");
    process.env["FLAPLAB_CORS_ORIGINS"] = "https://play.example.com";
    let other: RunningServer | undefined;
    try {
      other = await startServer({ topology: await loadTopology(topo.file), group: "monolith", dataDir: topo.dir, logger: pino({ level: "silent" }) });
      const url = `http://127.0.0.1:${other.port}${ROUTE}`;
      const ask = (origin: string) =>
        fetch(url, { method: "OPTIONS", headers: { origin, "access-control-request-method": "POST" } }).then((r) => r.headers.get("access-control-allow-origin"));
      expect(await ask("https://play.example.com")).toBe("https://play.example.com");
      expect(await ask("http://127.0.0.1:5173")).toBeNull();
    } finally {
      delete process.env["FLAPLAB_CORS_ORIGINS"];
      await other?.stop();
      await rm(topo.dir, { recursive: true, force: true });
    }
  });
});
