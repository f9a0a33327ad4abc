// The monolith under attack as a child process: start, health, restart after a crash on the same
// data, the credentials the cases use, and the stored runs that must survive the attack.
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import tls from "node:tls";
import { createInterface } from "node:readline";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-node";
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { CALLER_HEADER } from "@flaplab/runtime";
import { COMPONENT_NAMES, type ComponentName } from "@flaplab/component";
import { createServiceSigner, createSigner, generateComponentKeys, loadOrCreateKeys, openLocalIdentity, type ServiceSigner } from "@flaplab/identity";

const CHILD = fileURLToPath(new URL("./monolith-child.ts", import.meta.url));
/** tsx's loader, for the child (vitest has no import.meta.resolve). */
const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const PASSWORD = "a long enough password";
/** The player whose runs are recorded before the attack and must all be there after it. */
export const KEEPER = "keeper";
/** The player the cases act as (then `fuzzer-2`, `fuzzer-3`, …: see FuzzServer.nextPlayer). */
export const PLAYER = "fuzzer";

/** What a case may put in `authorization` (and the caller header): valid, absent, expired, forged, garbage. */
export interface Credentials {
  readonly player: string;
  /** The engine's and the initiator's credentials, one per callee (a credential names its callee). */
  readonly engine: Readonly<Record<ComponentName, string>>;
  readonly initiator: Readonly<Record<ComponentName, string>>;
  readonly expired: string;
  readonly forged: string;
  readonly forgedComponent: string;
}

export interface StoredRun {
  readonly gameId: string;
  readonly score: number;
  readonly ticks: number;
  readonly seed: bigint;
}

export class FuzzServer {
  private child!: ChildProcess;
  private exit: { code: number | null; signal: string | null } | undefined;
  private stderr: string[] = [];
  port = 0;
  streamPort = 0;
  dir = "";
  credentials!: Credentials;
  keeperToken = "";
  restarts = 0;
  /** Who the cases act as now, and the credentials are for. */
  player = PLAYER;
  private players = 1;
  readonly storedRuns: StoredRun[] = [];

  static async start(): Promise<FuzzServer> {
    const s = new FuzzServer();
    await s.spawn(undefined);
    const auth = createClient(AuthService, createConnectTransport({ baseUrl: s.baseUrl, httpVersion: "1.1" }));
    s.keeperToken = (await auth.register({ username: KEEPER, password: PASSWORD })).session!.token;
    await auth.register({ username: PLAYER, password: PASSWORD });
    await s.refreshCredentials();
    return s;
  }

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The monolith's process id. */
  get pid(): number | undefined {
    return this.child.pid;
  }

  get exited(): boolean {
    return this.exit !== undefined;
  }

  /** Whether the server exits within `ms` (a client saw a failure: was it the server dying?). */
  async exitsWithin(ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (!this.exited && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    return this.exited;
  }

  exitReason(): string {
    const how = this.exit ? (this.exit.signal ?? `code ${this.exit.code}`) : "running";
    const tail = this.stderr.filter((l) => l.trim() !== "").slice(-6).join(" ⏎ ");
    return tail ? `${how}: ${tail}` : how;
  }

  private async spawn(dataDir: string | undefined): Promise<void> {
    this.exit = undefined;
    this.stderr = [];
    const child = spawn(process.execPath, ["--import", TSX, CHILD], {
      env: { ...process.env, ...(dataDir ? { FUZZ_DATA_DIR: dataDir } : {}) },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.child = child;
    child.on("exit", (code, signal) => (this.exit = { code, signal }));
    createInterface({ input: child.stderr! }).on("line", (l) => {
      this.stderr.push(l);
      if (this.stderr.length > 60) this.stderr.shift();
    });
    const first = await new Promise<string>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      lines.once("line", resolve);
      child.once("exit", () => reject(new Error(`the monolith did not start: ${this.exitReason()}`)));
    });
    const info = JSON.parse(first) as { port: number; streamPort: number; dir: string };
    this.port = info.port;
    this.streamPort = info.streamPort;
    this.dir = info.dir;
  }

  /**
   * The cases act as a player nobody has used yet: each remote target starts with one, and a target
   * whose cases left its player with the most games in progress a player may have (games started by
   * HandleInput or a stream's first input, then left) goes on with the next, so one target's games
   * never use up another's quota.
   */
  async nextPlayer(): Promise<void> {
    this.player = `${PLAYER}-${++this.players}`;
    await this.refreshCredentials();
  }

  /** Fresh credentials for `player` (component ones last 5 min). */
  async refreshCredentials(): Promise<void> {
    const player = this.player;
    // Signed with the auth component's key as a login would (Login itself is throttled by the cases).
    const service = (await openLocalIdentity(this.dir)).serviceSigner;
    const keys = await loadOrCreateKeys(this.dir);
    const token = (await createSigner({ privateKey: keys.privateKey }).sign(player)).token;
    const past = () => Date.now() - 3 * 3600_000;
    const expired = (await createSigner({ privateKey: keys.privateKey, now: past, ttlSeconds: 60 }).sign(player)).token;
    const otherDir = await mkdtemp(join(tmpdir(), "flaplab-fuzz-keys-"));
    try {
      const otherKeys = await loadOrCreateKeys(otherDir);
      const forged = (await createSigner({ privateKey: otherKeys.privateKey }).sign(player)).token;
      const forgedComponent = await createServiceSigner({ keys: generateComponentKeys().signing }).tokenFor("engine", "score", player);
      this.credentials = {
        player: token,
        engine: await credentialsOf(service, "engine", player),
        initiator: await credentialsOf(service, "initiator", player),
        expired,
        forged,
        forgedComponent,
      };
    } finally {
      await rm(otherDir, { recursive: true, force: true });
    }
  }

  async healthy(timeoutMs = 5_000): Promise<boolean> {
    if (this.exited) return false;
    try {
      const res = await fetch(`${this.baseUrl}/healthz`, { signal: AbortSignal.timeout(timeoutMs) });
      await res.arrayBuffer();
      return res.status === 200;
    } catch {
      return false;
    }
  }

  /** After a crash or hang: the same monolith again, on the same data and ports. */
  async restart(): Promise<void> {
    this.restarts++;
    if (!this.exited) {
      this.child.kill("SIGKILL");
      await new Promise((r) => this.child.once("exit", r));
    }
    await this.spawn(this.dir);
    await this.refreshCredentials();
  }

  /**
   * A new game of the fuzz player (through the initiator, as the browser starts one): its id and
   * stream ticket. When the player has the most games in progress it may have, of the next player.
   */
  async newGame(): Promise<{ id: string; ticket: string } | undefined> {
    const initiator = createClient(InitiatorService, createConnectTransport({ baseUrl: this.baseUrl, httpVersion: "1.1" }));
    try {
      const start = () => initiator.startGame({}, { headers: { authorization: `Bearer ${this.credentials.player}` } });
      const res = await start().catch(async (err: unknown) => {
        if (ConnectError.from(err).code !== Code.ResourceExhausted) throw err;
        await this.nextPlayer();
        return start();
      });
      return { id: res.gameId, ticket: res.streamTicket };
    } catch {
      return undefined;
    }
  }

  /**
   * Opens the music stream of a game of the fuzz player over the WebSocket mapping (the browser's
   * fallback) and keeps reading it, so that PlayMusic has a stream to push to. Closed by the result.
   */
  async openMusicStream(gameId: string, ticket: string): Promise<() => void> {
    const query = new URLSearchParams({ gameId, ticket, token: ticket });
    const socket = tls.connect({ host: "127.0.0.1", port: this.streamPort, rejectUnauthorized: false, ALPNProtocols: ["http/1.1"] });
    socket.on("error", () => undefined);
    await new Promise<void>((resolve, reject) => {
      socket.once("secureConnect", resolve);
      socket.once("close", () => reject(new Error("the stream port closed the connection")));
    });
    let head = "";
    socket.write(
      `GET /music/v1/music?${query} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: webtransport_kDraft2\r\n\r\n`,
    );
    await new Promise<void>((resolve, reject) => {
      const onData = (d: Buffer) => {
        head += d.toString("latin1");
        if (!head.includes("\r\n\r\n")) return;
        socket.off("data", onData);
        if (head.startsWith("HTTP/1.1 101")) resolve();
        else reject(new Error(`music stream refused: ${head.split("\r\n")[0]}`));
      };
      socket.on("data", onData);
    });
    socket.resume();
    // Open the client's first bidirectional stream (id 1) with an empty stream capsule, masked with zeros.
    socket.write(Buffer.from("828500000000990b4d3b01", "hex"));
    return () => socket.destroy();
  }

  /** Records `n` runs of the keeper, as the engine does at game over. */
  async recordRuns(n: number): Promise<void> {
    const token = await (await openLocalIdentity(this.dir)).serviceSigner.tokenFor("engine", "score", KEEPER);
    const score = createClient(ScoreService, createConnectTransport({ baseUrl: this.baseUrl, httpVersion: "1.1" }));
    for (let i = 0; i < n; i++) {
      const run: StoredRun = { gameId: `keeper-run-${i}`, score: 3 + i, ticks: 200 + 17 * i, seed: 6977347407732442987n - BigInt(i) };
      await score.recordRun(run, { headers: { authorization: `Bearer ${token}`, [CALLER_HEADER]: "engine" } });
      this.storedRuns.push(run);
    }
  }

  /** How many of the runs recorded at the start are still on the scoreboard, unchanged. */
  async storedRunsIntact(): Promise<number> {
    const score = createClient(ScoreService, createConnectTransport({ baseUrl: this.baseUrl, httpVersion: "1.1" }));
    const { ownRuns } = await score.getScores({ limit: 100 }, { headers: { authorization: `Bearer ${this.keeperToken}` } });
    return this.storedRuns.filter((r) =>
      ownRuns.some((o) => o.gameId === r.gameId && o.username === KEEPER && o.score === r.score && o.ticks === r.ticks && o.seed === r.seed),
    ).length;
  }

  async stop(): Promise<void> {
    if (!this.exited) {
      this.child.kill("SIGTERM");
      await Promise.race([new Promise((r) => this.child.once("exit", r)), new Promise((r) => setTimeout(r, 5_000).unref())]);
      if (!this.exited) this.child.kill("SIGKILL");
    }
    if (this.dir) await rm(this.dir, { recursive: true, force: true });
  }
}

/** `caller`'s credential for each component, acting for `player`. */
async function credentialsOf(signer: ServiceSigner, caller: ComponentName, player: string): Promise<Record<ComponentName, string>> {
  const entries = await Promise.all(COMPONENT_NAMES.map(async (callee) => [callee, await signer.tokenFor(caller, callee, player)] as const));
  return Object.fromEntries(entries) as Record<ComponentName, string>;
}
