import { Code, ConnectError } from "@connectrpc/connect";
import { SoundClipSchema } from "@flaplab/contracts/music/v1/music_pb";
import { CloseCode, type SessionHandler, checkStreamOwnership, encodeDelimited } from "@flaplab/game-protocol";
import type { MusicStreamHandle, MusicStreams } from "./streams.js";

export interface MusicSessionDeps {
  /** The registry PlayMusic sends to (share it with `createMusic`). */
  readonly streams: MusicStreams;
  /** A session with more unsent bytes than this when a clip comes is closed 4429 (default 1 MiB). */
  readonly maxBufferedBytes?: number;
}

export const DEFAULT_MUSIC_MAX_BUFFERED_BYTES = 1024 * 1024;

/**
 * The music stream handler: each session becomes the game's music stream in `@flaplab/stream-servers`, and every
 * clip sent there goes down the session as a size-delimited SoundClip. After the game-over clip
 * the session is closed 0 "game over". Refusals: no stream ticket → 4401, the ticket of another
 * game → 4403 (`checkStreamOwnership`: the initiator issues a game's ticket only to the player who
 * started it, so another player cannot open, and so cannot disturb, the owner's music stream);
 * the game already has a music stream → 4409; the client writes to the stream → 4400; the client
 * does not keep up → 4429.
 */
export function createMusicSessionHandler(deps: MusicSessionDeps): SessionHandler {
  const { streams } = deps;
  const maxBuffered = deps.maxBufferedBytes ?? DEFAULT_MUSIC_MAX_BUFFERED_BYTES;

  return (session) => {
    const refusal = checkStreamOwnership(session);
    if (refusal) return session.close(refusal.code, refusal.reason);
    let handle: MusicStreamHandle;
    try {
      handle = streams.open(session.gameId, (clip) => {
        if (session.bufferedBytes > maxBuffered) {
          session.close(CloseCode.TooSlow, "client too slow");
          throw new Error("client too slow");
        }
        if (!session.send(encodeDelimited(SoundClipSchema, clip))) throw new Error("the music session is closed");
      });
    } catch (err) {
      const e = ConnectError.from(err);
      if (e.code === Code.AlreadyExists) session.close(CloseCode.AlreadyConnected, "game already has a music stream");
      else if (e.code === Code.InvalidArgument) session.close(CloseCode.Malformed, e.rawMessage);
      else session.close(CloseCode.Internal, `cannot open the music stream: ${e.rawMessage}`);
      return;
    }

    void handle.closed.then((reason) => {
      if (reason === "game-over") session.close(CloseCode.Normal, "game over");
      else if (reason === "sink-failed") session.close(CloseCode.Internal, "the music stream failed");
      // "closed": the session ended first and closed the handle.
    });
    void session.closed.then(() => handle.close());

    session.read({
      onChunk: (chunk) => {
        if (chunk.length > 0) session.close(CloseCode.Malformed, "the music stream is receive-only");
      },
    });
  };
}
