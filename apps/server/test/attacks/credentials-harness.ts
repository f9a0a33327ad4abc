// A real monolith on loopback ports and a registered player: what the credential attacks start from.
import { rm } from "node:fs/promises";
import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import type { DescService } from "@bufbuild/protobuf";
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import type { HostLimits } from "@flaplab/host";
import { openLocalIdentity, type ServiceSigner, type StreamTicketSigner } from "@flaplab/identity";
import { loadTopology } from "@flaplab/runtime";
import { pino } from "pino";
import type { StartGameResponse } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { afterAll, beforeAll } from "vitest";
import { WebSocket } from "ws";
import { startServer, type RunningServer } from "../../src/server.js";
import { topologyOnFreePorts } from "../helpers.js";

export interface Monolith {
  readonly server: RunningServer;
  readonly dir: string;
  readonly baseUrl: string;
  /** Registers a player and returns their token. */
  register(username: string): Promise<string>;
  /**
   * Signs as any component, and stream tickets, with the keys in the server's data directory: what
   * someone who took a component's key (or a credential one sent) would hold.
   */
  keys(): Promise<{ readonly components: ServiceSigner; readonly tickets: StreamTicketSigner }>;
  /** A client of `service` over Connect (HTTP/1.1, JSON) or gRPC (h2c) that sends `headers` on every call. */
  client<S extends DescService>(service: S, protocol: "connect" | "grpc", headers: Record<string, string>): Client<S>;
  stop(): Promise<void>;
}

export interface MonolithOptions {
  /** Host limits instead of the defaults (and FLAPLAB_* overrides), e.g. short timeouts. */
  readonly hostLimits?: Partial<HostLimits>;
  /** FLAPLAB_* variables the server reads while it starts (this process's are restored afterwards). */
  readonly env?: Readonly<Record<string, string>>;
}

/** The repository's monolith topology on free loopback ports, started in this process on a fresh data directory. */
export async function startMonolith(options: MonolithOptions = {}): Promise<Monolith> {
  const topo = await topologyOnFreePorts("monolith");
  const env = options.env ?? {};
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  let server: RunningServer;
  try {
    server = await startServer({
      topology: await loadTopology(topo.file),
      group: "monolith",
      dataDir: topo.dir,
      logger: pino({ level: "silent" }),
      ...(options.hostLimits ? { hostLimits: options.hostLimits } : {}),
    });
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
  const baseUrl = `http://127.0.0.1:${server.port}`;
  const auth = createClient(AuthService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
  return {
    server,
    dir: topo.dir,
    baseUrl,
    async keys() {
      const identity = await openLocalIdentity(topo.dir);
      return { components: identity.serviceSigner, tickets: identity.tickets };
    },
    async register(username) {
      return (await auth.register({ username, password: "a long enough password" })).session!.token;
    },
    client(service, protocol, headers) {
      const setHeaders: Interceptor = (next) => (req) => {
        for (const [k, v] of Object.entries(headers)) req.header.set(k, v);
        return next(req);
      };
      const interceptors = [setHeaders];
      const transport = protocol === "grpc"
        ? createGrpcTransport({ baseUrl, interceptors })
        : createConnectTransport({ baseUrl, httpVersion: "1.1", interceptors });
      return createClient(service, transport);
    },
    async stop() {
      await server.stop();
      await rm(topo.dir, { recursive: true, force: true });
    },
  };
}

/** The Connect error code name of a failed call ("permission_denied"), or "ok". */
export async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (err) {
    const code = ConnectError.from(err).code;
    return Code[code]!.replace(/([a-z])([A-Z])/g, "$1_$2").toLowerCase();
  }
}

/**
 * For a test file: a monolith started before its tests (with `player` registered) and stopped
 * after them. Read `m` and `token` inside the tests, once `beforeAll` has run.
 */
export function monolithWithPlayer(player = "mallory"): { readonly m: Monolith; readonly token: string } {
  const state = {} as { m: Monolith; token: string };
  beforeAll(async () => {
    state.m = await startMonolith();
    state.token = await state.m.register(player);
  }, 60_000);
  afterAll(async () => {
    await state.m?.stop();
  });
  return state;
}

/** Polls `done` every 20 ms until it holds; its time in ms, or an error naming `what` past `withinMs`. */
export async function until(done: () => boolean | Promise<boolean>, withinMs: number, what: string): Promise<number> {
  const t0 = Date.now();
  while (!(await done())) {
    if (Date.now() - t0 > withinMs) throw new Error(`${what}: not within ${withinMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return Date.now() - t0;
}

/** A game stream session opened by `openStream`. */
export interface OpenedStream {
  readonly ws: WebSocket;
  /** Resolves with the close code. */
  readonly closed: Promise<number>;
}

/** Opens `url?gameId&ticket` of `game` from `localAddress`: the open session, or the HTTP status it was refused with. */
export function openStream(url: string, game: StartGameResponse, localAddress = "127.0.0.1"): Promise<OpenedStream | number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url}?${new URLSearchParams({ gameId: game.gameId, ticket: game.streamTicket })}`, { localAddress });
    const closed = new Promise<number>((r) => ws.once("close", (code) => r(code)));
    ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.once("open", () => resolve({ ws, closed }));
    ws.once("error", (err) => (ws.readyState === WebSocket.CLOSED ? undefined : reject(err)));
  });
}

/** 101 when the upgrade of `url?query` is accepted (the socket is then closed, and the server told, before this resolves), else the refusal's status. */
export function upgradeStatus(url: string, query: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url}?${new URLSearchParams(query)}`);
    ws.once("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
    ws.once("open", () => {
      // Closed, and the server told, before the next attempt (a game holds one session of each kind).
      ws.once("close", () => setTimeout(() => resolve(101), 50));
      ws.close();
    });
    ws.once("error", (err) => (ws.readyState === WebSocket.CLOSED ? undefined : reject(err)));
  });
}
