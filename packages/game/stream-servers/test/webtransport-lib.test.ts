// What the stream server relies on inside @fails-components/webtransport: if an upgrade of the
// library changes it, these tests fail (see src/webtransport-lib.ts).
import { execFile } from "node:child_process";
import { once } from "node:events";
import { connect } from "node:net";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { createDevCertificate } from "../src/index.js";
import { loadWebTransport, tlsServersOf } from "../src/webtransport-lib.js";

const PACKAGE = fileURLToPath(new URL("..", import.meta.url));

describe("the webtransport library as the stream server uses it", () => {
  it("loads without printing anything (the quiche loader's messages go to its debug logger)", async () => {
    const env = { ...process.env };
    delete env["DEBUG"];
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", "--input-type=module", "-e", "const m = await import('./src/webtransport-lib.ts'); const { http3 } = await m.loadWebTransport(); process.stdout.write('loaded http3=' + http3);"],
      { cwd: PACKAGE, env, timeout: 30_000 },
    );
    expect(stderr).toBe("");
    expect(stdout).toBe("loaded http3=false");
  });

  it("gives the TLS server a started server listens with, which sees every connection", async () => {
    const { lib } = await loadWebTransport();
    const certificate = await createDevCertificate();
    const server = new lib.Http2Server({ port: 0, host: "127.0.0.1", secret: randomBytes(16).toString("hex"), cert: certificate.cert, privKey: certificate.key } as never);
    server.startServer();
    await server.ready;
    try {
      const [tls] = tlsServersOf(server);
      const port = (server.address() as { port: number }).port;
      const seen = once(tls!, "connection");
      const socket = connect(port, "127.0.0.1");
      await seen;
      socket.destroy();
    } finally {
      server.stopServer();
    }
  });

  it("says so when the library's internals are not where it expects them", () => {
    expect(() => tlsServersOf({})).toThrow(/internals changed/);
  });
});
