import { generateKeyPairSync } from "node:crypto";
import { mkdtemp, readdir, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, onTestFinished } from "vitest";
import {
  componentKeyFiles,
  componentPrivateKeyEnv,
  componentPublicKeyEnv,
  hasPrivateKey,
  keyId,
  loadComponentKeys,
  RETIRED_SERVICE_KEY_ENV,
  TICKET_KEY_FILES,
  TICKET_PRIVATE_KEY_ENV,
  TICKET_PUBLIC_KEY_ENV,
} from "../src/index.js";

async function freshDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "flaplab-component-keys-"));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const pem = () => {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519");
  return {
    privatePem: privateKey.export({ format: "pem", type: "pkcs8" }).toString(),
    publicPem: publicKey.export({ format: "pem", type: "spki" }).toString(),
    publicKey,
  };
};

describe("loadComponentKeys from files (one machine)", () => {
  it("gives each component its own key pair, 0600, and every process the same keys", async () => {
    const dataDir = await freshDir();
    // The microservices' processes start at once on one data dir.
    const [engine, music, initiator] = await Promise.all([
      loadComponentKeys({ components: ["engine"], dataDir, env: {} }),
      loadComponentKeys({ components: ["music"], dataDir, env: {} }),
      loadComponentKeys({ components: ["initiator", "worldgen"], dataDir, env: {} }),
    ]);
    expect([...engine.signing.keys()]).toEqual(["engine"]);
    expect([...initiator.signing.keys()].sort()).toEqual(["initiator", "worldgen"]);
    // Six keys, six different ones; the others' public halves agree with the owners'.
    const kids = new Set([...engine.verifying.values()].map((k) => k.kid));
    expect(kids.size).toBe(6);
    expect(music.verifying.get("engine")?.kid).toBe(engine.signing.get("engine")?.kid);
    expect(engine.verifying.get("music")?.kid).toBe(music.signing.get("music")?.kid);
    // The ticket key is none of them: its pair with the initiator and the engine, its public half with music.
    expect(initiator.tickets && hasPrivateKey(initiator.tickets)).toBe(true);
    expect(engine.tickets && hasPrivateKey(engine.tickets)).toBe(true);
    expect(music.tickets && hasPrivateKey(music.tickets)).toBe(false);
    expect(music.tickets?.kid).toBe(initiator.tickets?.kid);
    expect(engine.tickets?.kid).toBe(initiator.tickets?.kid);
    expect(kids.has(initiator.tickets!.kid)).toBe(false);
    const file = join(dataDir, "keys", componentKeyFiles("engine").privateFile);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await readdir(join(dataDir, "keys"))).sort()).toContain(TICKET_KEY_FILES.privateFile);
    // Opened again: the same keys.
    const again = await loadComponentKeys({ components: ["engine"], dataDir, env: {} });
    expect(again.signing.get("engine")?.kid).toBe(engine.signing.get("engine")?.kid);
  });

  it("gives a process that runs neither the initiator nor a stream component no ticket key", async () => {
    const keys = await loadComponentKeys({ components: ["score", "auth"], dataDir: await freshDir(), env: {} });
    expect(keys.tickets).toBeUndefined();
    expect([...keys.signing.keys()].sort()).toEqual(["auth", "score"]);
  });
});

describe("loadComponentKeys from the environment (a cloud task)", () => {
  it("holds only the keys of the components it runs, the others' public halves and the ticket key's half it needs", async () => {
    const engine = pem();
    const music = pem();
    const ticket = pem();
    const keys = await loadComponentKeys({
      components: ["music"],
      env: {
        [componentPrivateKeyEnv("music")]: music.privatePem,
        [componentPublicKeyEnv("engine")]: engine.publicPem,
        [TICKET_PUBLIC_KEY_ENV]: ticket.publicPem,
      },
    });
    expect([...keys.signing.keys()]).toEqual(["music"]);
    expect([...keys.verifying.keys()].sort()).toEqual(["engine", "music"]);
    expect(keys.verifying.get("engine")?.kid).toBe(await keyId(engine.publicKey));
    expect(keys.tickets?.kid).toBe(await keyId(ticket.publicKey));
    expect(keys.tickets && hasPrivateKey(keys.tickets)).toBe(false);
  });

  it("says which variable is missing or misplaced", async () => {
    const engine = pem();
    const ticket = pem();
    await expect(loadComponentKeys({ components: ["engine"], env: { [TICKET_PRIVATE_KEY_ENV]: ticket.privatePem } })).rejects.toThrow(
      "FLAPLAB_COMPONENT_KEY_ENGINE is not set: this process runs engine, which signs its calls with its own key",
    );
    await expect(loadComponentKeys({ components: ["engine"], env: { [componentPrivateKeyEnv("engine")]: engine.privatePem } })).rejects.toThrow(
      /FLAPLAB_TICKET_PRIVATE_KEY is not set/,
    );
    await expect(loadComponentKeys({ components: ["music"], env: { [componentPrivateKeyEnv("music")]: engine.privatePem } })).rejects.toThrow(
      /FLAPLAB_TICKET_PUBLIC_KEY is not set/,
    );
    // Another component's private key, or the ticket key's private half anywhere but with the initiator, is refused.
    await expect(
      loadComponentKeys({ components: ["music"], env: { [componentPrivateKeyEnv("music")]: engine.privatePem, [componentPrivateKeyEnv("engine")]: engine.privatePem, [TICKET_PUBLIC_KEY_ENV]: ticket.publicPem } }),
    ).rejects.toThrow(/FLAPLAB_COMPONENT_KEY_ENGINE is set, but this process does not run engine/);
    await expect(
      loadComponentKeys({ components: ["music"], env: { [componentPrivateKeyEnv("music")]: engine.privatePem, [TICKET_PRIVATE_KEY_ENV]: ticket.privatePem } }),
    ).rejects.toThrow(/only the initiator and the engine sign stream tickets/);
    await expect(loadComponentKeys({ components: ["engine"], env: { [componentPrivateKeyEnv("engine")]: "not a key", [TICKET_PRIVATE_KEY_ENV]: ticket.privatePem } })).rejects.toThrow(
      /^FLAPLAB_COMPONENT_KEY_ENGINE: /,
    );
    await expect(loadComponentKeys({ components: ["engine"], env: { [RETIRED_SERVICE_KEY_ENV]: engine.privatePem } })).rejects.toThrow(/is no longer read/);
  });
});
