import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSigner, createVerifier, loadOrCreateKeys } from "@flaplab/identity";
import { chunksOf, CloseCode, type StreamSession } from "@flaplab/game-protocol";
import { type StreamAuthorizer, type StreamRoute, tokenAuthorizer } from "../src/index.js";

/** A player's token, the authorizer that accepts it, and the folder of the keys behind both. */
export async function testPlayer(username = "alice"): Promise<{ dir: string; token: string; authorize: StreamAuthorizer; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "flaplab-streams-"));
  const keys = await loadOrCreateKeys(dir);
  return {
    dir,
    token: (await createSigner({ privateKey: keys.privateKey }).sign(username)).token,
    authorize: tokenAuthorizer(createVerifier({ publicKey: keys.publicKey })),
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}

/**
 * An echo route: answers each chunk with `<player>:<game id>:<text>`, through `send` or, with
 * `sendFrom`, from a buffer it overwrites right after (which `sendFrom` must have copied); "bye"
 * closes 4042 "asked to leave", "over" closes normally. Every session goes into `sessions`.
 */
export function echoRoute(sessions: StreamSession[], how: "send" | "sendFrom" = "send"): StreamRoute {
  return {
    kind: "echo",
    handler: (session) => {
      sessions.push(session);
      void (async () => {
        const reused = new Uint8Array(64);
        for await (const chunk of chunksOf(session)) {
          const text = new TextDecoder().decode(chunk);
          if (text === "bye") return session.close(4042, "asked to leave");
          if (text === "over") return session.close(CloseCode.Normal, "game over");
          const reply = new TextEncoder().encode(`${session.principal.username}:${session.gameId}:${text}`);
          if (how === "send") {
            session.send(reply);
            continue;
          }
          reused.set(reply, 3);
          session.sendFrom(reused, 3, 3 + reply.length);
          reused.fill(0);
        }
      })();
    },
  };
}
