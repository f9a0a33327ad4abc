// The player's calls over Connect: register and log in (auth), start a game and continue one
// (initiator). The transport is the caller's: connect-web in a page, connect-node in Node.
import { type Client, Code, ConnectError, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { AuthService, type Session } from "@flaplab/contracts/auth/v1/auth_pb";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { InitiatorService, type StartGameRequestSchema, type StartGameResponse } from "@flaplab/contracts/initiator/v1/initiator_pb";
import type { EngineHome } from "./resume.js";

/** Adds `Authorization: Bearer <token>` when `token()` gives one. */
export function bearer(token: () => string | undefined): Interceptor {
  return (next) => async (req) => {
    const t = token();
    if (t) req.header.set("Authorization", `Bearer ${t}`);
    return next(req);
  };
}

export interface GameApiOptions {
  /** Where auth is, and where the initiator is (the same transport in a monolith). */
  readonly auth: Transport;
  readonly initiator: Transport;
  /**
   * The player's token for the initiator's calls. Without it the API keeps the token of its own
   * last register or login.
   */
  readonly token?: () => string | undefined;
}

export class GameApi {
  readonly auth: Client<typeof AuthService>;
  readonly initiator: Client<typeof InitiatorService>;
  private session: Session | undefined;
  private readonly token: () => string | undefined;

  constructor(opts: GameApiOptions) {
    this.token = opts.token ?? (() => this.session?.token);
    this.auth = createClient(AuthService, opts.auth);
    this.initiator = createClient(InitiatorService, opts.initiator);
  }

  /** The session of the last register or login here. */
  get current(): Session | undefined {
    return this.session;
  }

  async register(username: string, password: string): Promise<Session> {
    return this.keep((await this.auth.register({ username, password })).session);
  }

  async login(username: string, password: string): Promise<Session> {
    return this.keep((await this.auth.login({ username, password })).session);
  }

  /** StartGame as the logged-in player. */
  async startGame(request: MessageInitShape<typeof StartGameRequestSchema> = {}): Promise<StartGameResponse> {
    return this.initiator.startGame(request, { headers: this.headers() });
  }

  /** ResumeGame: where the game continues after its engine went away. */
  async resumeGame(gameId: string): Promise<EngineHome> {
    const { game } = await this.initiator.resumeGame({ gameId }, { headers: this.headers() });
    if (!game) throw new ConnectError("the initiator answered ResumeGame without the game", Code.Internal);
    return game;
  }

  private headers(): Record<string, string> {
    const token = this.token();
    if (!token) throw new ConnectError("not logged in: register or log in first", Code.Unauthenticated);
    return { authorization: `Bearer ${token}` };
  }

  private keep(session: Session | undefined): Session {
    if (!session || session.token === "") throw new ConnectError("the auth service returned no session", Code.Internal);
    this.session = session;
    return session;
  }
}
