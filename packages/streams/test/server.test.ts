import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CloseCode, type StreamSession } from "@flaplab/game-stream";
import { createSigner, createVerifier, loadOrCreateKeys } from "@flaplab/identity";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDevCertificate, createStreamServer, loadOrCreateDevCertificate, loadWebTransport, tokenAuthorizer, type StreamServer } from "../src/index.js";

let server: StreamServer;
let dir: string;
let token: string;
const sessions: StreamSession[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "flaplab-streams-"));
  const keys = await loadOrCreateKeys(dir);
  token = (await createSigner({ privateKey: keys.privateKey }).sign("alice")).token;
  server = await createStreamServer({
    host: "127.0.0.1",
    port: 0,
    certificate: await createDevCertificate(),
    authorize: tokenAuthorizer(createVerifier({ publicKey: keys.publicKey })),
    logger: pino({ level: "silent" }),
    routes: {
      "/echo": {
        kind: "echo",
        handler: (session) => {
          sessions.push(session);
          void (async () => {
            for await (const chunk of session.incoming) {
              const text = new TextDecoder().decode(chunk);
              if (text === "bye") {
                session.close(4000 + 42, "asked to leave");
                return;
              }
              session.send(new TextEncoder().encode(`${session.principal.username}:${session.gameId}:${text}`));
            }
          })();
        },
      },
    },
  });
}, 30_000);

afterAll(async () => {
  await server?.close();
  await rm(dir, { recursive: true, force: true });
});

async function open(query: string, path = "/echo") {
  const { lib } = await loadWebTransport();
  const wt = new lib.WebTransport(`https://127.0.0.1:${server.port}${path}?${query}`, {
    forceReliable: true,
    serverCertificateHashes: [{ algorithm: "sha-256", value: server.certificate.sha256 }],
  } as never);
  return wt;
}

describe("stream server", () => {
  it("authenticates a session, hands it to the route with its game id, and carries bytes both ways", async () => {
    const wt = await open(`gameId=g-1&token=${token}`);
    await wt.ready;
    const stream = await wt.createBidirectionalStream();
    const writer = stream.writable.getWriter();
    const reader = stream.readable.getReader();
    await writer.write(new TextEncoder().encode("hello"));
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toBe("alice:g-1:hello");
    expect(sessions.at(-1)?.kind).toBe("echo");

    await writer.write(new TextEncoder().encode("bye"));
    const info = await wt.closed;
    expect(info).toMatchObject({ closeCode: 4042, reason: "asked to leave" });
  });

  it("refuses a session with a bad token before accepting it", async () => {
    const wt = await open("gameId=g-2&token=not-a-token");
    const closed = wt.closed.catch((e: unknown) => e);
    await expect(wt.ready).rejects.toBeDefined();
    expect(await closed).toBeInstanceOf(Error);
    expect(server.openSessions).toBe(0);
  });

  it("refuses a session without a game id", async () => {
    const wt = await open(`token=${token}`);
    const closed = wt.closed.catch((e: unknown) => e);
    await expect(wt.ready).rejects.toBeDefined();
    expect(await closed).toBeInstanceOf(Error);
  });

  it("refuses an unknown path", async () => {
    const wt = await open(`gameId=g&token=${token}`, "/nope");
    const closed = wt.closed.catch((e: unknown) => e);
    await expect(wt.ready).rejects.toBeDefined();
    expect(await closed).toBeInstanceOf(Error);
  });

  it("keeps a certificate on disk and reuses it until it nears expiry", async () => {
    const a = await loadOrCreateDevCertificate(join(dir, "tls"));
    const b = await loadOrCreateDevCertificate(join(dir, "tls"));
    expect(Buffer.from(b.sha256).equals(Buffer.from(a.sha256))).toBe(true);
    expect(a.notAfter.getTime() - Date.now()).toBeLessThan(14 * 24 * 3600_000);
  });
});
