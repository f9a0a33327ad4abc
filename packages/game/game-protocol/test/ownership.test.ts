import type { Principal } from "@flaplab/component";
import { describe, expect, it } from "vitest";
import { checkStreamOwnership, CloseCode } from "../src/index.js";
import { MemoryStreamSession } from "../src/testing.js";

const expiresAt = new Date(Date.UTC(2030, 0, 1));
const ticketOf = (username: string, gameId: string | undefined): Principal => ({ username, token: `ticket-${username}`, expiresAt, gameId });

describe("checkStreamOwnership", () => {
  it("admits the ticket's player to the ticket's game, with or without a known owner", () => {
    expect(checkStreamOwnership({ gameId: "g-a", principal: ticketOf("alice", "g-a") })).toBeUndefined();
    expect(checkStreamOwnership({ gameId: "g-a", principal: ticketOf("alice", "g-a") }, "alice")).toBeUndefined();
  });

  it("refuses a ticket of another game (the ticket of bob's own game, used on alice's game id) with 4403", () => {
    expect(checkStreamOwnership({ gameId: "g-a", principal: ticketOf("bob", "g-b") })).toEqual({
      code: CloseCode.PermissionDenied,
      reason: "the stream ticket is not for game g-a",
    });
  });

  it("refuses a ticket whose player is not the game's known owner with 4403", () => {
    expect(checkStreamOwnership({ gameId: "g-a", principal: ticketOf("bob", "g-a") }, "alice")).toEqual({
      code: CloseCode.PermissionDenied,
      reason: "game g-a belongs to another player",
    });
  });

  it("refuses a principal that came with no ticket (a player token) with 4401", () => {
    expect(checkStreamOwnership({ gameId: "g-a", principal: ticketOf("alice", undefined) }, "alice")).toEqual({
      code: CloseCode.Unauthenticated,
      reason: "a stream needs the game's stream ticket",
    });
    expect(checkStreamOwnership({ gameId: "g-a", principal: ticketOf("alice", "") }, "alice")?.code).toBe(CloseCode.PermissionDenied);
  });

  it("is what a memory session passes by default, and fails for a memory session given another game's ticket", () => {
    const own = new MemoryStreamSession({ gameId: "g-a", principal: ticketOf("alice", undefined) });
    expect(own.principal.gameId).toBe("g-a");
    expect(checkStreamOwnership(own, "alice")).toBeUndefined();
    const foreign = new MemoryStreamSession({ gameId: "g-a", principal: ticketOf("bob", "g-b") });
    expect(checkStreamOwnership(foreign)?.code).toBe(CloseCode.PermissionDenied);
  });
});
