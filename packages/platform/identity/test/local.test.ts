import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import { openLocalIdentity } from "../src/index.js";

/** A folder of this test's own, removed when it finishes. */
async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "flaplab-local-identity-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe("openLocalIdentity", () => {
  it("signs players' tokens and component credentials that its verifier accepts", async () => {
    const identity = await openLocalIdentity(await freshDir());
    const player = await identity.verifier.verify((await identity.signer.sign("alice")).token);
    expect(player.username).toBe("alice");
    expect(player.service).toBeUndefined();
    const component = await identity.verifier.verify(await identity.serviceSigner.tokenFor("engine", "music", "alice"));
    expect(component).toMatchObject({ username: "alice", service: "engine", callee: "music" });
  });

  it("reads the same keys when opened again, so another process's verifier accepts the first one's tokens", async () => {
    const dir = await freshDir();
    const first = await openLocalIdentity(dir);
    const second = await openLocalIdentity(dir);
    await expect(second.verifier.verify((await first.signer.sign("bob")).token)).resolves.toMatchObject({ username: "bob" });
    await expect(second.verifier.verify(await first.serviceSigner.tokenFor("initiator", "worldgen", "bob"))).resolves.toMatchObject({ service: "initiator" });
  });

  it("does not accept tokens signed with another directory's keys", async () => {
    const other = await openLocalIdentity(await freshDir());
    const mine = await openLocalIdentity(await freshDir());
    await expect(mine.verifier.verify((await other.signer.sign("mallory")).token)).rejects.toThrow(/invalid token: signed by an unknown key/);
  });
});
