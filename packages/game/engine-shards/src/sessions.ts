// The two ends of the sessions the group's process hands to its shards. The group names each
// session with an id (sent with its game, `PlayGame.session`): the shard reports that id closed
// (`session-closed`) and the group may ask it to close that id (`close-session`), so that the
// group's WebSocket link counts the session in its shares until it has closed, and can close it
// when a newer session of its player replaces it.
import type { HandedOffSession } from "@flaplab/stream-servers";

/** What the shard's side needs of a session it serves (a `StreamSession` is one): closing it, and when it has closed. */
export interface ServedSession {
  close(code: number, reason: string): void;
  readonly closed: Promise<unknown>;
}

/**
 * The group's side, for one shard: the sessions handed to it that it has not reported closed, each
 * as the `HandedOffSession` the WebSocket link counts.
 */
export class ShardSessions {
  private readonly open = new Map<number, () => void>();

  /** `askClose`: sends the shard a request to close session `id`. */
  constructor(private readonly askClose: (id: number, code: number, reason: string) => void) {}

  /** Sessions handed to the shard and not closed. */
  get size(): number {
    return this.open.size;
  }

  /** Counts session `id`, just handed to the shard, until the shard reports it closed or is gone. */
  add(id: number): HandedOffSession {
    let release!: () => void;
    const closed = new Promise<void>((resolve) => (release = resolve));
    this.open.set(id, release);
    return {
      closed,
      close: (code, reason) => {
        if (this.open.has(id)) this.askClose(id, code, reason);
      },
    };
  }

  /** The shard reported session `id` closed (or never opened). False for an id it does not hold. */
  closed(id: number): boolean {
    const release = this.open.get(id);
    if (!release) return false;
    this.open.delete(id);
    release();
    return true;
  }

  /** The shard is gone, and the sessions it served with it: releases every one; how many there were. */
  releaseAll(): number {
    const n = this.open.size;
    for (const release of this.open.values()) release();
    this.open.clear();
    return n;
  }
}

/** A session handed to a shard: undefined until its upgrade is answered, and a close asked for before then. */
interface AdoptedSession {
  session: ServedSession | undefined;
  closeAsked: { readonly code: number; readonly reason: string } | undefined;
}

/**
 * The shard's side: the sessions handed to it, by the group's id, from their arrival until they
 * have closed. A close the group asks for before the session's upgrade has been answered is made
 * as soon as it has.
 */
export class AdoptedSessions {
  private readonly byId = new Map<number, AdoptedSession>();

  /** `reportClosed`: tells the group that session `id` has closed (or never opened). */
  constructor(private readonly reportClosed: (id: number) => void) {}

  /** Sessions handed here and not closed (their upgrades answered or not). */
  get size(): number {
    return this.byId.size;
  }

  /** Tracks session `id`, whose upgrade `opening` answers (undefined: it never opened), and reports it closed once it has. */
  track(id: number, opening: Promise<ServedSession | undefined>): void {
    const entry: AdoptedSession = { session: undefined, closeAsked: undefined };
    this.byId.set(id, entry);
    const end = (): void => {
      if (this.byId.get(id) !== entry) return;
      this.byId.delete(id);
      this.reportClosed(id);
    };
    opening.then(
      (session) => {
        if (!session) return end();
        entry.session = session;
        void session.closed.then(end);
        if (entry.closeAsked) session.close(entry.closeAsked.code, entry.closeAsked.reason);
      },
      end,
    );
  }

  /**
   * The group asks: closes session `id` with `code` and `reason` now, or as soon as its upgrade has
   * been answered. False for an id not here (closed already, or never handed here).
   */
  close(id: number, code: number, reason: string): boolean {
    const entry = this.byId.get(id);
    if (!entry) return false;
    if (entry.session) entry.session.close(code, reason);
    else entry.closeAsked ??= { code, reason };
    return true;
  }
}
