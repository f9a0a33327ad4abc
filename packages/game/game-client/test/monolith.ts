// A real monolith in this process on free loopback ports, for the client's tests. The server is
// imported by path, not declared as a dependency: the server's own tests depend on this package.
import { rm } from "node:fs/promises";
import { connect, createServer, type Socket } from "node:net";
import { repositoryTopologyOnFreePorts } from "@flaplab/deployment";
import { loadTopology } from "@flaplab/runtime";
import { pino } from "pino";
import { startServer } from "../../../../apps/server/src/server.js";

export interface Monolith {
  /** The Connect base URL of every component. */
  readonly baseUrl: string;
  /** SHA-256 of the stream server's certificate, for the WebTransport link. */
  readonly certSha256: Uint8Array;
  stop(): Promise<void>;
}

export async function startMonolith(): Promise<Monolith> {
  const topo = await repositoryTopologyOnFreePorts("monolith");
  const server = await startServer({ topology: await loadTopology(topo.file), group: "monolith", dataDir: topo.dir, logger: pino({ level: "silent" }) });
  return {
    baseUrl: `http://127.0.0.1:${server.port}`,
    certSha256: server.streams!.certificate.sha256,
    async stop() {
      await server.stop();
      await rm(topo.dir, { recursive: true, force: true });
    },
  };
}

/** A loopback TCP relay to `target` whose connections the test can cut, as a broken network would. */
export async function cuttableRelay(target: { host: string; port: number }): Promise<{ port: number; cut(): void; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    port,
    cut: () => {
      for (const s of sockets) s.destroy();
    },
    close: () => new Promise((r) => server.close(() => r())),
  };
}
