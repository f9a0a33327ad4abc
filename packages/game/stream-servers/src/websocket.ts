import type { IncomingMessage } from "node:http";
import type { Socket } from "node:net";
import type { Principal } from "@flaplab/component";
import { type ChunkReader, CloseCode, type SessionEnd, type StreamSession } from "@flaplab/game-protocol";
import type { Logger } from "pino";
import { type WebSocket, WebSocketServer } from "ws";
import { admitSessionRequest, type LiveSession, runHandler, SessionEnding, type StreamAuthorizer, type StreamRoute, type StreamRoutes, startIdleSweep } from "./admission.js";
import { resolveStreamLimits, type StreamLimits } from "./limits.js";
import { type SharedSession, SessionShares } from "./shares.js";

/** Largest client message a WebSocket session takes (the engine's own limit, 256 B, is checked after). */
export const DEFAULT_MAX_WEBSOCKET_MESSAGE_BYTES = 64 * 1024;

export interface WebSocketStreamsOptions {
  /** URL path → route: the same routes as the WebTransport server. */
  readonly routes: StreamRoutes;
  readonly authorize: StreamAuthorizer;
  readonly logger: Logger;
  /** `maxSessions` and `idleTimeoutMs` apply (the others are for the WebTransport port). */
  readonly limits?: Partial<StreamLimits>;
  /** A larger client message closes the session (1009). Default 64 KiB. */
  readonly maxMessageBytes?: number;
  /**
   * Offered every admitted upgrade before it is answered (and after the shares' precheck): take the
   * socket over (e.g. hand it to the process that plays the game; that process calls `adopt`) and
   * return the session's stand-in, or return false to serve it here. A session handed off counts
   * here as one served here does (the game's, player's and address's shares and `maxSessions`)
   * until its stand-in's `closed` resolves.
   */
  readonly handoff?: (upgrade: AdmittedUpgrade) => HandedOffSession | false;
}

/**
 * A session that another process serves, as the link that admitted it sees it: the link's shares
 * and session cap count it until `closed` resolves, and closing it (a newer session of its player
 * replacing it, or the link closing) is asking that process to.
 */
export interface HandedOffSession {
  /** Resolves once the serving process reports the session closed (or never opened), or is gone. */
  readonly closed: Promise<void>;
  /** Asks the serving process to close the session: the client sees `code` and `reason`. */
  close(code: number, reason: string): void;
}

/** An upgrade request that passed admission, not answered yet. */
export interface AdmittedUpgrade {
  readonly path: string;
  readonly kind: string;
  readonly gameId: string;
  readonly principal: Principal;
  readonly req: IncomingMessage;
  readonly socket: Socket;
  readonly head: Buffer;
}

/** What `adopt` needs of an upgrade request another process admitted. */
export interface UpgradeRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage["headers"];
}

/**
 * The plain WebSocket link of a process's streams, served on its HTTP/1.1 port: a request's
 * Upgrade is admitted as a WebTransport session request is (same routes, the same checks and
 * statuses), and the session reaches the same handler. One binary WebSocket message carries
 * what one stream write would: size-delimited messages, as many as the sender put in it.
 */
export interface WebSocketStreams {
  /** Give it an HTTP/1.1 server's "upgrade" event: it answers (101, or the refusal status) and owns the socket. */
  handleUpgrade(req: IncomingMessage, socket: Socket, head: Buffer): void;
  /**
   * Serves an upgrade that was admitted elsewhere (`handoff` in another process, the socket sent
   * along): answers 101 and hands the session to the route of `path`, with no second admission
   * (the admitting process counts it). Resolves with the session once it is up, or undefined when
   * it never was (refused here, or the socket closed first).
   */
  adopt(req: UpgradeRequest, socket: Socket, head: Buffer, admitted: { path: string; gameId: string; principal: Principal }): Promise<StreamSession | undefined>;
  readonly limits: StreamLimits;
  /** Sessions served here and open now. */
  readonly openSessions: number;
  /** Sessions `handoff` took whose process has not reported them closed: `maxSessions` counts them too. */
  readonly handedOffSessions: number;
  /** Closes every session (4500 "server shutting down"), asking the processes of those handed off to. */
  close(): Promise<void>;
}

const STATUS_TEXT: Readonly<Record<number, string>> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  429: "Too Many Requests",
  503: "Service Unavailable",
};

export function createWebSocketStreams(opts: WebSocketStreamsOptions): WebSocketStreams {
  const { logger, routes } = opts;
  const limits = resolveStreamLimits(opts.limits);
  const wss = new WebSocketServer({
    noServer: true,
    clientTracking: false,
    perMessageDeflate: false,
    maxPayload: opts.maxMessageBytes ?? DEFAULT_MAX_WEBSOCKET_MESSAGE_BYTES,
  });
  /** Upgrades admitted or being admitted, open sessions and sessions handed off: the session cap counts all three. */
  let pending = 0;
  const live = new Set<LiveSession>();
  const handedOff = new Set<SharedSession>();
  const sweep = startIdleSweep(live, limits.idleTimeoutMs, logger);
  const shares = new SessionShares(limits, logger);
  let closing = false;

  /**
   * Answers 101 and runs the session; `shared`: counted against the game's, player's and address's
   * shares here. Resolves with the session, or undefined when there is none (refused by the shares,
   * or the handshake failed).
   */
  function upgrade(req: IncomingMessage, socket: Socket, head: Buffer, route: StreamRoute, gameId: string, principal: Principal, shared = true): Promise<StreamSession | undefined> {
    return new Promise<StreamSession | undefined>((resolve) => {
      wss.handleUpgrade(req, socket, head, (ws) => {
        const entry = adapt(ws, socket, route.kind, gameId, principal, logger);
        if (shared && !shares.admit(entry.session, socket.remoteAddress)) return resolve(undefined);
        live.add(entry);
        void entry.session.closed.then(() => live.delete(entry));
        runHandler(route, entry.session, logger);
        resolve(entry.session);
      });
      // A handshake ws refuses (bad key or version) is answered by ws and the socket destroyed.
      socket.once("close", () => resolve(undefined));
    });
  }

  /** Counts a session `handoff` took, in the shares and the session cap, until its process reports it closed. */
  function holdHandedOff(session: HandedOffSession, kind: string, gameId: string, principal: Principal, address: string | undefined): void {
    const standIn: SharedSession = { kind, gameId, principal, closed: session.closed, close: (code, reason) => session.close(code, reason) };
    handedOff.add(standIn);
    void session.closed.then(() => handedOff.delete(standIn));
    // Nothing ran between the precheck and the handoff: the shares admit it (replacing the player's oldest if need be).
    shares.admit(standIn, address);
  }

  return {
    limits,
    get openSessions() {
      return live.size;
    },
    get handedOffSessions() {
      return handedOff.size;
    },
    handleUpgrade(req, socket, head) {
      pending++;
      void (async () => {
        const result = await admitSessionRequest(req.url ?? "/", {
          routes,
          authorize: opts.authorize,
          logger,
          maxSessions: limits.maxSessions,
          openSessions: live.size + handedOff.size + pending - 1,
          link: "websocket",
        });
        if (socket.destroyed) return;
        if (closing) return refuse(socket, 503);
        if (!result.admitted) return refuse(socket, result.status);
        const { path, route, gameId, principal } = result;
        // Read now: a socket handed to another process is closed here.
        const address = socket.remoteAddress;
        const share = shares.precheck(route.kind, principal.gameId ?? gameId, address);
        if (share) {
          logger.info({ event: "stream-rejected", link: "websocket", kind: route.kind, gameId, status: share.status, reason: share.reason }, "stream rejected");
          return refuse(socket, share.status);
        }
        const handed = opts.handoff?.({ path, kind: route.kind, gameId, principal, req, socket, head });
        if (handed) return holdHandedOff(handed, route.kind, gameId, principal, address);
        await upgrade(req, socket, head, route, gameId, principal);
      })()
        .catch((err: unknown) => {
          logger.error({ err }, "websocket upgrade failed");
          socket.destroy();
        })
        .finally(() => pending--);
    },
    async adopt(req, socket, head, admitted) {
      const route = Object.hasOwn(routes, admitted.path) ? routes[admitted.path] : undefined;
      if (!route || closing) {
        refuse(socket, route ? 503 : 404);
        return undefined;
      }
      // Admitted by another process's link (its checks, its shares): not counted again here.
      return upgrade(req as IncomingMessage, socket, head, route, admitted.gameId, admitted.principal, false).catch((err: unknown) => {
        logger.error({ err }, "websocket upgrade failed");
        socket.destroy();
        return undefined;
      });
    },
    async close() {
      closing = true;
      clearInterval(sweep);
      for (const s of live) s.session.close(CloseCode.Internal, "server shutting down");
      for (const s of handedOff) s.close(CloseCode.Internal, "server shutting down");
    },
  };
}

function refuse(socket: Socket, status: number): void {
  const text = STATUS_TEXT[status] ?? "Error";
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** WebSocket close codes: 1000 for the normal end (code 0 is not a WebSocket code), 4xxx as they are. */
export function webSocketCloseCode(code: number): number {
  return code === CloseCode.Normal ? 1000 : code;
}

/** The session's code from a WebSocket close code (1000 and 1005, "no code", are the normal end). */
export function sessionCloseCode(wsCode: number): number {
  return wsCode === 1000 || wsCode === 1005 ? CloseCode.Normal : wsCode;
}

/** A close reason fits in 123 bytes of UTF-8. */
function closeReason(reason: string): string {
  const bytes = Buffer.from(reason, "utf8");
  return bytes.length <= 123 ? reason : `${bytes.subarray(0, 120).toString("utf8").replace(/\uFFFD+$/, "")}…`;
}

/**
 * A WebSocket as a StreamSession. Sends are written straight to the socket as single binary
 * frames (a server's frames are not masked): `sendFrom` builds the frame, header and payload,
 * in one pooled buffer and writes it, so a game frame costs one small write and no copy beyond
 * that one. ws reads the client's frames and answers pings and closes.
 *
 * A class, not an object literal with a getter per session: every session shares one shape, so
 * the engine's tick reads `bufferedBytes` and calls `sendFrom` through inline caches that stay
 * monomorphic however many games run (a literal's getters would give each session a shape of
 * its own, and those reads a megamorphic lookup per tick).
 */
class WebSocketSession implements StreamSession {
  readonly closed: Promise<SessionEnd>;
  /** The session and when it last moved bytes, for the idle sweep. */
  readonly entry: LiveSession;

  constructor(
    private readonly ws: WebSocket,
    private readonly socket: Socket,
    private readonly ending: SessionEnding,
    readonly kind: string,
    readonly gameId: string,
    readonly principal: Principal,
  ) {
    this.closed = ending.closed;
    this.entry = { session: this, lastActivity: performance.now() };
  }

  read(reader: ChunkReader): void {
    this.ending.inbox.read(reader);
  }

  send(bytes: Uint8Array): boolean {
    return this.sendFrom(bytes, 0, bytes.length);
  }

  sendFrom(source: Uint8Array, start: number, end: number): boolean {
    const socket = this.socket;
    if (this.ending.ended || socket.destroyed || !socket.writable) return false;
    const length = end - start;
    const header = length < 126 ? 2 : length < 65_536 ? 4 : 10;
    const frame = Buffer.allocUnsafe(header + length);
    frame[0] = 0x82; // FIN, binary
    if (header === 2) {
      frame[1] = length;
    } else if (header === 4) {
      frame[1] = 126;
      frame.writeUInt16BE(length, 2);
    } else {
      frame[1] = 127;
      frame.writeUInt32BE(0, 2);
      frame.writeUInt32BE(length, 6);
    }
    for (let i = 0; i < length; i++) frame[header + i] = source[start + i] as number;
    this.entry.lastActivity = performance.now();
    socket.write(frame);
    return true;
  }

  get bufferedBytes(): number {
    return this.socket.writableLength;
  }

  close(code: number, reason: string): void {
    if (this.ending.ended) return;
    this.ending.finish({ code, reason, by: "server" });
    try {
      this.ws.close(webSocketCloseCode(code), closeReason(reason));
    } catch {
      this.socket.destroy();
    }
  }
}

/** Wraps `ws` (on `socket`) as a session and wires the client's messages and closes to it. */
function adapt(ws: WebSocket, socket: Socket, kind: string, gameId: string, principal: Principal, logger: Logger): LiveSession {
  socket.setNoDelay(true);
  const ending = new SessionEnding();
  const session = new WebSocketSession(ws, socket, ending, kind, gameId, principal);
  const { entry } = session;
  ws.on("message", (data, isBinary) => {
    if (ending.ended) return;
    entry.lastActivity = performance.now();
    if (!isBinary) {
      session.close(CloseCode.Malformed, "text messages are not part of the stream: send binary messages");
      return;
    }
    const bytes = data as Buffer;
    if (bytes.length > 0) ending.inbox.deliver(bytes);
  });
  ws.on("close", (code, reason) => ending.finish({ code: sessionCloseCode(code), reason: reason.toString("utf8"), by: "client" }));
  ws.on("error", (err) => {
    // ws closes the connection itself (1009 for a message over the limit, 1002 for a protocol error).
    logger.info({ event: "stream-websocket-error", kind, gameId, err: err.message }, "websocket session error");
    ending.finish({ code: CloseCode.Malformed, reason: err.message, by: "transport" });
  });
  return entry;
}
