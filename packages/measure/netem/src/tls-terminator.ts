import { connect, type Socket } from "node:net";
import { createServer, type TLSSocket } from "node:tls";
import { parseAddress } from "@flaplab/runtime";

/** What a cloud load balancer's HTTPS listener does, on loopback: TLS in front of a plain port. */
export interface TlsTerminator {
  /** host:port of the TLS listener. */
  readonly listen: string;
  /** Where the decrypted bytes go. */
  readonly upstream: string;
  /** TLS connections accepted so far (each one a full handshake: no session resumption). */
  readonly handshakes: number;
  close(): Promise<void>;
}

export interface TlsTerminatorOptions {
  /** Port to listen on (127.0.0.1). */
  readonly port: number;
  /** host:port of the plain server (it tells HTTP/1.1 from h2c prior knowledge itself). */
  readonly upstream: string;
  readonly cert: string;
  readonly key: string;
}

/**
 * A TLS listener on 127.0.0.1 that forwards each connection's decrypted bytes to `upstream`.
 * ALPN offers h2 and http/1.1, as an AWS load balancer does, so a caller gets the HTTP version it
 * asked for; the plain server behind it receives HTTP/1.1 or h2c with prior knowledge.
 */
export async function startTlsTerminator(options: TlsTerminatorOptions): Promise<TlsTerminator> {
  const { host, port } = parseAddress(options.upstream);
  const sockets = new Set<Socket>();
  let handshakes = 0;
  const server = createServer({ cert: options.cert, key: options.key, ALPNProtocols: ["h2", "http/1.1"] }, (client: TLSSocket) => {
    handshakes++;
    const backend = connect({ host, port, noDelay: true });
    client.setNoDelay(true);
    sockets.add(client);
    sockets.add(backend);
    // Either side ending or failing ends both; errors are the peer's (a reset, a refused port).
    const end = () => {
      client.destroy();
      backend.destroy();
    };
    client.on("error", end).on("close", () => {
      sockets.delete(client);
      end();
    });
    backend.on("error", end).on("close", () => {
      sockets.delete(backend);
      end();
    });
    client.pipe(backend);
    backend.pipe(client);
  });
  // A failed handshake (a client that does not trust the certificate) closes that connection only.
  server.on("tlsClientError", (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  return {
    listen: `127.0.0.1:${options.port}`,
    upstream: options.upstream,
    get handshakes() {
      return handshakes;
    },
    close() {
      for (const s of sockets) s.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
