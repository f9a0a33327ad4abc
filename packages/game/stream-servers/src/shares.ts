import type { Principal } from "@flaplab/component";
import { CloseCode } from "@flaplab/game-protocol";
import type { Logger } from "pino";

/**
 * What the shares count of a session: its kind, its game and principal (the ticket's game and
 * player), how to close it, and when it has closed. A `StreamSession` is one; so is the stand-in
 * of a session that another process serves (see `HandedOffSession`), whose `close` asks that
 * process to close it and whose `closed` resolves when that process reports it closed.
 */
export interface SharedSession {
  readonly kind: string;
  readonly gameId: string;
  readonly principal: Principal;
  close(code: number, reason: string): void;
  readonly closed: Promise<unknown>;
}

/** The per-game, per-player and per-address caps of a link's sessions (`StreamLimits`). */
export interface SessionShareLimits {
  readonly maxSessionsPerPlayer: number;
  readonly maxSessionsPerAddress: number;
}

/** A refusal before the upgrade: the HTTP status and why. */
export interface ShareRefusal {
  readonly status: 409 | 429;
  readonly reason: string;
}

/**
 * Who holds the sessions of one link, beside its process-wide cap (`maxSessions`):
 * - per game: one session of each kind (one engine, one music) per game, the game being the one
 *   the session's stream ticket admits to; a second is refused (409 before the upgrade, or closed
 *   4409 "already has a stream");
 * - per address: at most `maxSessionsPerAddress` (429 before the upgrade, or closed 4430);
 * - per player: at most `maxSessionsPerPlayer`; a newer session replaces the player's oldest, which
 *   is closed 4430 (a player who starts games quickly is never locked out by the streams of games
 *   they left; one account never holds more than its share).
 */
export class SessionShares {
  private readonly byGame = new Map<string, SharedSession>();
  private readonly byPlayer = new Map<string, Set<SharedSession>>();
  private readonly byAddress = new Map<string, number>();

  constructor(
    private readonly limits: SessionShareLimits,
    private readonly logger: Logger,
  ) {}

  /** Why a session of `kind` for ticket game `game` from `address` would be refused now, or undefined. */
  precheck(kind: string, game: string, address: string | undefined): ShareRefusal | undefined {
    if (this.byGame.has(`${kind}|${game}`)) return { status: 409, reason: `game ${game} already has a ${kind} stream` };
    if (address !== undefined && (this.byAddress.get(address) ?? 0) >= this.limits.maxSessionsPerAddress) {
      return { status: 429, reason: `too many stream sessions from your address (at most ${this.limits.maxSessionsPerAddress})` };
    }
    return undefined;
  }

  /**
   * Counts an open session until it closes; closes it instead (and returns false) past the game's
   * or the address's share. Past the player's share, the player's oldest session is closed, wherever
   * it is served.
   */
  admit(session: SharedSession, address: string | undefined): boolean {
    const game = session.principal.gameId ?? session.gameId;
    const refusal = this.precheck(session.kind, game, address);
    if (refusal) {
      this.logger.info({ event: "stream-rejected", kind: session.kind, gameId: session.gameId, player: session.principal.username, address, reason: refusal.reason }, "stream rejected");
      session.close(refusal.status === 409 ? CloseCode.AlreadyConnected : CloseCode.LimitReached, refusal.reason);
      return false;
    }
    const player = session.principal.username;
    let mine = this.byPlayer.get(player);
    if (!mine) this.byPlayer.set(player, (mine = new Set()));
    if (mine.size >= this.limits.maxSessionsPerPlayer) {
      const oldest = mine.values().next().value as SharedSession;
      mine.delete(oldest);
      this.logger.info({ event: "stream-replaced", kind: oldest.kind, gameId: oldest.gameId, player, by: session.gameId }, "oldest stream session of the player replaced");
      oldest.close(CloseCode.LimitReached, `replaced by a newer stream session of player ${player} (at most ${this.limits.maxSessionsPerPlayer})`);
    }
    const gameKey = `${session.kind}|${game}`;
    this.byGame.set(gameKey, session);
    mine.add(session);
    if (address !== undefined) this.byAddress.set(address, (this.byAddress.get(address) ?? 0) + 1);
    void session.closed.then(() => {
      if (this.byGame.get(gameKey) === session) this.byGame.delete(gameKey);
      const set = this.byPlayer.get(player);
      if (set?.delete(session) && set.size === 0) this.byPlayer.delete(player);
      if (address !== undefined) {
        const n = (this.byAddress.get(address) ?? 1) - 1;
        if (n > 0) this.byAddress.set(address, n);
        else this.byAddress.delete(address);
      }
    });
    return true;
  }
}

/** The address of `host:port` (`[v6]:port` too). */
export function addressOfPeer(peer: string | undefined): string | undefined {
  if (peer === undefined) return undefined;
  const colon = peer.lastIndexOf(":");
  const host = colon < 0 ? peer : peer.slice(0, colon);
  return host.replace(/^\[(.*)\]$/, "$1");
}
