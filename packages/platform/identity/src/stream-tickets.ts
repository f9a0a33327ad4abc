import { Code, ConnectError } from "@connectrpc/connect";
import type { Principal } from "@flaplab/component";
import { errors, jwtVerify, SignJWT, type JWTPayload } from "jose";
import { DEFAULT_ISSUER, MAX_TOKEN_LENGTH, TOKEN_ALGORITHM } from "./tokens.js";
import { keyId, toPrivateKeyObject, toPublicKeyObject, type KeyInput } from "./keys.js";

/** The audience of stream tickets: neither a player token nor a component credential passes for one. */
export const STREAM_AUDIENCE = "flaplab-stream";
/** How long a ticket may be used to open a stream; a session already open keeps going after that. */
export const STREAM_TICKET_TTL_SECONDS = 60;

/** What a verified stream ticket admits: one player to the streams of one game. */
export interface StreamTicket {
  readonly gameId: string;
  readonly username: string;
  /** The engine (its group) whose game stream the ticket opens; undefined for a ticket that names none. */
  readonly engine: string | undefined;
  /** The ticket itself. */
  readonly ticket: string;
  readonly expiresAt: Date;
}

export interface StreamTicketSigner {
  /**
   * A ticket for `username` to open the streams of `gameId`, valid for a minute; the game stream
   * only at `engine` (the engine group that holds the game), when given.
   */
  sign(gameId: string, username: string, engine?: string): Promise<{ readonly ticket: string; readonly expiresAt: Date }>;
}

export interface StreamTicketSignerOptions {
  /** The stream-ticket key's private half (`loadComponentKeys`'s `tickets`, held only where the initiator runs). */
  readonly privateKey: KeyInput;
  readonly issuer?: string | undefined;
  readonly ttlSeconds?: number | undefined;
  /** Clock in epoch milliseconds (tests). Defaults to `Date.now`. */
  readonly now?: (() => number) | undefined;
}

/**
 * Signs stream tickets: EdDSA JWTs with the stream-ticket key (no component signs its calls with it), audience `flaplab-stream`,
 * `sub` = the player and `gid` = the game, valid for `ttlSeconds` (default 60). The initiator
 * issues one with every game it starts; engine and music admit a stream only with it.
 */
export function createStreamTicketSigner(opts: StreamTicketSignerOptions): StreamTicketSigner {
  const key = toPrivateKeyObject(opts.privateKey);
  const kidOf = keyId(key);
  const issuer = opts.issuer ?? DEFAULT_ISSUER;
  const ttl = opts.ttlSeconds ?? STREAM_TICKET_TTL_SECONDS;
  const now = opts.now ?? Date.now;
  if (!Number.isInteger(ttl) || ttl <= 0) throw new Error(`ttlSeconds must be a positive integer, got ${ttl}`);
  return {
    async sign(gameId, username, engine) {
      if (typeof gameId !== "string" || gameId === "") throw new Error("a stream ticket needs a game id");
      if (typeof username !== "string" || username === "") throw new Error("a stream ticket needs a username");
      const kid = await kidOf;
      const iat = Math.floor(now() / 1000);
      const exp = iat + ttl;
      const ticket = await new SignJWT(engine === undefined ? { gid: gameId } : { gid: gameId, eng: engine })
        .setProtectedHeader({ alg: TOKEN_ALGORITHM, typ: "JWT", kid })
        .setSubject(username)
        .setIssuer(issuer)
        .setAudience(STREAM_AUDIENCE)
        .setIssuedAt(iat)
        .setExpirationTime(exp)
        .sign(key);
      return { ticket, expiresAt: new Date(exp * 1000) };
    },
  };
}

export interface StreamTicketVerifier {
  /** The verified ticket, or a ConnectError with Code.Unauthenticated saying why not. */
  verify(ticket: string): Promise<StreamTicket>;
}

export interface StreamTicketVerifierOptions {
  /** The stream-ticket key (its public half is enough). */
  readonly publicKey: KeyInput;
  readonly issuer?: string | undefined;
  readonly clockToleranceSec?: number | undefined;
  /** Clock in epoch milliseconds (tests). Defaults to `Date.now`. */
  readonly now?: (() => number) | undefined;
}

function invalidTicket(reason: string, cause?: unknown): ConnectError {
  return new ConnectError(`invalid stream ticket: ${reason}`, Code.Unauthenticated, undefined, undefined, cause);
}

/**
 * Verifies stream tickets with the stream-ticket key: EdDSA only, audience exactly
 * `flaplab-stream`, a game id and a player. Nothing is cached: a ticket is checked once per stream.
 */
export function createStreamTicketVerifier(opts: StreamTicketVerifierOptions): StreamTicketVerifier {
  const key = toPublicKeyObject(opts.publicKey);
  const kidOf = keyId(key);
  const issuer = opts.issuer ?? DEFAULT_ISSUER;
  const tolerance = opts.clockToleranceSec ?? 5;
  const now = opts.now ?? Date.now;
  return {
    async verify(ticket) {
      if (typeof ticket !== "string" || ticket === "") throw invalidTicket("missing");
      if (ticket.length > MAX_TOKEN_LENGTH) throw invalidTicket("malformed (too long)");
      const kid = await kidOf;
      let payload: JWTPayload;
      try {
        ({ payload } = await jwtVerify(
          ticket,
          (header) => {
            if (header.kid !== kid) throw new KeyMismatch(`signed by an unknown key (kid ${String(header.kid)})`);
            return key;
          },
          {
            algorithms: [TOKEN_ALGORITHM],
            issuer,
            audience: STREAM_AUDIENCE,
            clockTolerance: tolerance,
            currentDate: new Date(now()),
            requiredClaims: ["exp", "sub"],
          },
        ));
      } catch (err) {
        throw describe(err);
      }
      const audiences = typeof payload.aud === "string" ? [payload.aud] : (payload.aud ?? []);
      if (audiences.length !== 1) throw invalidTicket("wrong audience");
      const gameId = payload["gid"];
      if (typeof gameId !== "string" || gameId === "") throw invalidTicket("missing game id");
      const username = payload.sub;
      if (typeof username !== "string" || username === "") throw invalidTicket("missing username");
      const engine = payload["eng"];
      if (engine !== undefined && (typeof engine !== "string" || engine === "")) throw invalidTicket("bad engine");
      return Object.freeze({ gameId, username, engine, ticket, expiresAt: new Date((payload.exp as number) * 1000) });
    },
  };
}

class KeyMismatch extends Error {}

function describe(err: unknown): ConnectError {
  if (err instanceof KeyMismatch) return invalidTicket(err.message, err);
  if (err instanceof errors.JWTExpired) return invalidTicket("expired", err);
  if (err instanceof errors.JWTClaimValidationFailed) {
    if (err.claim === "aud") return invalidTicket("wrong audience", err);
    if (err.claim === "iss") return invalidTicket("wrong issuer", err);
    if (err.claim === "sub") return invalidTicket("missing username", err);
    return invalidTicket(`bad claim "${err.claim}"`, err);
  }
  if (err instanceof errors.JWSSignatureVerificationFailed) return invalidTicket("bad signature", err);
  if (err instanceof errors.JOSEAlgNotAllowed) return invalidTicket(`algorithm not allowed (only ${TOKEN_ALGORITHM})`, err);
  return invalidTicket("malformed", err);
}

/** The query parameter a stream URL carries its ticket in: `?gameId=<id>&ticket=<ticket>`. */
export const STREAM_TICKET_PARAM = "ticket";

/**
 * The stream server's authorization with tickets: the `ticket` query parameter, verified, as the
 * principal of the session (`gameId` = the game the ticket admits to; the handlers compare it with
 * the URL's game through `checkStreamOwnership` of @flaplab/game-protocol). A missing or bad ticket
 * throws Unauthenticated; a player token in `token` is not looked at.
 */
export function createStreamAuthorizer(verifier: StreamTicketVerifier): (query: URLSearchParams) => Promise<Principal> {
  return async (query) => {
    const ticket = await verifier.verify(query.get(STREAM_TICKET_PARAM) ?? "");
    return Object.freeze({ username: ticket.username, token: ticket.ticket, expiresAt: ticket.expiresAt, gameId: ticket.gameId, engine: ticket.engine });
  };
}
