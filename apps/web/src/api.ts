import { Code, ConnectError, createClient, type Client, type Interceptor } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { timestampMs } from "@bufbuild/protobuf/wkt";
import type { Session } from "@flaplab/contracts/auth/v1/auth_pb";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { bearer, GameApi } from "@flaplab/game-client";
import type { AppConfig } from "./config.js";
import { jwtExpiryMs, type SessionStore, type StoredSession } from "./session-store.js";

export interface Api {
  /** Register, login, StartGame and ResumeGame, as the player of the stored session. */
  readonly game: GameApi;
  readonly score: Client<typeof ScoreService>;
}

/** Adds `Authorization: Bearer <token>` when a session is stored. */
export function authInterceptor(sessions: SessionStore): Interceptor {
  return bearer(() => sessions.get()?.token);
}

/** Connect clients (binary Connect protocol) for the three services the page calls. */
export function createApi(config: AppConfig, sessions: SessionStore): Api {
  const transport = (baseUrl: string, interceptors: Interceptor[] = []) => createConnectTransport({ baseUrl, useBinaryFormat: true, interceptors });
  return {
    game: new GameApi({ auth: transport(config.authUrl), initiator: transport(config.initiatorUrl), token: () => sessions.get()?.token }),
    score: createClient(ScoreService, transport(config.scoreUrl, [authInterceptor(sessions)])),
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
