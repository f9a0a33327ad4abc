import { Code, ConnectError } from "@connectrpc/connect";
import type { Principal } from "@flaplab/component";
import { ChunkInbox, CloseCode, type SessionEnd, type SessionHandler, type StreamSession } from "@flaplab/game-protocol";
import type { Logger } from "pino";

/**
 * Decides who a session request is from, before the upgrade is accepted: gets the query of the
 * stream URL and the route's kind ("engine", "music"), returns the session's principal, or throws
 * to refuse the request (ConnectError Unauthenticated → 401, PermissionDenied → 403, InvalidArgument
 * → 400, NotFound → 404; any other error → 401).
 */
export type StreamAuthorizer = (query: URLSearchParams, kind: string) => Promise<Principal>;

export interface StreamRoute {
  /** "engine" or "music". */
  readonly kind: string;
  readonly handler: SessionHandler;
}

export type StreamRoutes = Readonly<Record<string, StreamRoute>>;

/** What a session request gets: a refusal status, or the session's route, game and principal. */
export type AdmissionResult =
  | { readonly admitted: false; readonly status: number }
  | { readonly admitted: true; readonly path: string; readonly route: StreamRoute; readonly gameId: string; readonly principal: Principal };

export interface AdmissionContext {
  readonly routes: StreamRoutes;
  readonly authorize: StreamAuthorizer;
  readonly logger: Logger;
  readonly maxSessions: number;
  /** Sessions open now on this transport. */
  readonly openSessions: number;
  /** "webtransport" or "websocket", for the log. */
  readonly link: string;
}

/** The status a refused credential is answered with. */
export function refusalStatus(err: unknown): number {
  if (!(err instanceof ConnectError)) return 401;
  switch (err.code) {
    case Code.PermissionDenied:
      return 403;
    case Code.InvalidArgument:
      return 400;
    case Code.NotFound:
      return 404;
    default:
      return 401;
  }
}

/**
 * The one admission check of both links, in this order: a path that is no route → 404, no
 * `gameId` query parameter → 400, `maxSessions` open → 503, then `authorize` (401/403/400/404
 * when it throws). Never rejects.
 */
export async function admitSessionRequest(rawPath: string, ctx: AdmissionContext): Promise<AdmissionResult> {
  const { logger, routes, link } = ctx;
  let url: URL;
  try {
    url = new URL(rawPath, "https://stream.invalid");
  } catch {
    return { admitted: false, status: 400 };
  }
  const route = Object.hasOwn(routes, url.pathname) ? routes[url.pathname] : undefined;
  if (!route) return { admitted: false, status: 404 };
  const gameId = url.searchParams.get("gameId") ?? "";
  if (gameId === "") {
    logger.info({ event: "stream-rejected", link, kind: route.kind, status: 400, reason: "missing gameId query parameter" }, "stream rejected");
    return { admitted: false, status: 400 };
  }
  if (ctx.openSessions >= ctx.maxSessions) {
    logger.warn({ event: "stream-rejected", link, kind: route.kind, gameId, status: 503, reason: "too many sessions", maxSessions: ctx.maxSessions }, "stream rejected");
    return { admitted: false, status: 503 };
  }
  try {
    const principal = await ctx.authorize(url.searchParams, route.kind);
    return { admitted: true, path: url.pathname, route, gameId, principal };
  } catch (err) {
    const status = refusalStatus(err);
    const reason = err instanceof ConnectError ? err.rawMessage : String((err as Error)?.message ?? err);
    logger.info({ event: "stream-rejected", link, kind: route.kind, gameId, status, reason }, "stream rejected");
    return { admitted: false, status };
  }
}

/** Hands a session to its route's handler: a handler that throws or rejects ends that session only (4500). */
export function runHandler(route: StreamRoute, session: StreamSession, logger: Logger): void {
  const failed = (err: unknown): void => {
    logger.error({ err, kind: route.kind, gameId: session.gameId }, "stream handler failed");
    session.close(CloseCode.Internal, "internal error");
  };
  try {
    const result: unknown = route.handler(session);
    if (result instanceof Promise) result.catch(failed);
  } catch (err) {
    failed(err);
  }
}

/**
 * How a transport's session ends: once, by whoever is first (`by`); `closed` resolves with that
 * end, and the client's input (`inbox`) ends with it.
 */
export class SessionEnding {
  /** The client's bytes, from the transport to the handler's reader. */
  readonly inbox = new ChunkInbox();
  readonly closed: Promise<SessionEnd>;
  private resolveClosed!: (end: SessionEnd) => void;
  private end: SessionEnd | undefined;

  constructor() {
    this.closed = new Promise((resolve) => (this.resolveClosed = resolve));
  }

  get ended(): boolean {
    return this.end !== undefined;
  }

  /** Ends the session with `end`, unless it has ended already. */
  finish(end: SessionEnd): void {
    if (this.end) return;
    this.end = end;
    this.resolveClosed(end);
    this.inbox.end();
  }
}

/** A session and when it last moved bytes, for the idle sweep. */
export interface LiveSession {
  readonly session: StreamSession;
  /** performance.now() of the last bytes either way. */
  lastActivity: number;
}

/** Closes sessions idle for `idleTimeoutMs` (4400 "idle for … ms"); the timer never keeps the process up. */
export function startIdleSweep(live: ReadonlySet<LiveSession>, idleTimeoutMs: number, logger: Logger): NodeJS.Timeout {
  const sweep = setInterval(() => {
    const now = performance.now();
    for (const s of live) {
      if (now - s.lastActivity > idleTimeoutMs) {
        logger.info({ event: "stream-idle", kind: s.session.kind, gameId: s.session.gameId, idleTimeoutMs }, "stream session idle, closing");
        s.session.close(CloseCode.Malformed, `idle for ${idleTimeoutMs} ms`);
      }
    }
  }, Math.min(5_000, Math.max(50, Math.floor(idleTimeoutMs / 4))));
  sweep.unref();
  return sweep;
}
