import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { AuthService, type Session } from "@flaplab/contracts/auth/v1/auth_pb";
import { InitiatorService } from "@flaplab/contracts/initiator/v1/initiator_pb";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import type { AppConfig } from "./config.js";
import { jwtExpiryMs, type SessionStore, type StoredSession } from "./session-store.js";

export interface Api {
  readonly auth: Client<typeof AuthService>;
  readonly initiator: Client<typeof InitiatorService>;
  readonly score: Client<typeof ScoreService>;
}

/** Adds `Authorization: Bearer <token>` when a session is stored. */
export function authInterceptor(sessions: SessionStore): Interceptor {
  return (next) => async (req) => {
    const session = sessions.get();
    if (session) req.header.set("Authorization", `Bearer ${session.token}`);
    return next(req);
  };
}

/** Connect clients (binary Connect protocol) for the three services the page calls. */
export function createApi(config: AppConfig, sessions: SessionStore): Api {
  const transport = (baseUrl: string, withToken: boolean) =>
    createConnectTransport({
      baseUrl,
      useBinaryFormat: true,
      interceptors: withToken ? [authInterceptor(sessions)] : [],
    });
  return {
    auth: createClient(AuthService, transport(config.authUrl, false)),
    initiator: createClient(InitiatorService, transport(config.initiatorUrl, true)),
    score: createClient(ScoreService, transport(config.scoreUrl, true)),
  };
}

/** What the page keeps of an auth Session. */
export function toStoredSession(session: Session | undefined, now: number = Date.now()): StoredSession {
  if (!session || session.token === "") throw new Error("the auth service returned no session");
  const expiresAtMs = session.expiresAt ? timestampMs(session.expiresAt) : (jwtExpiryMs(session.token) ?? now + 15 * 60_000);
  return { username: session.username, token: session.token, expiresAtMs };
}

/** A message for the page: the server's own text for Connect errors, without the code prefix. */
export function errorText(err: unknown): string {
  if (err instanceof ConnectError) {
    if (err.code === Code.Unavailable || err.code === Code.Unknown) {
      return err.rawMessage ? `${err.rawMessage} (server unreachable?)` : "server unreachable";
    }
    return err.rawMessage || Code[err.code];
  }
  return err instanceof Error ? err.message : String(err);
}

/** True for errors that mean the stored token is no longer accepted. */
export function isUnauthenticated(err: unknown): boolean {
  return err instanceof ConnectError && err.code === Code.Unauthenticated;
}
