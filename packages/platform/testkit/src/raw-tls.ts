import { connect, type TLSSocket } from "node:tls";

/** A raw TLS connection to a loopback port, for tests that write bytes a real client never would. */
export interface RawTlsConnection {
  readonly socket: TLSSocket;
  /** Everything received so far. */
  received(): Buffer;
  /** Resolves with true when the server has closed the connection, or with false after `ms`. */
  closedWithin(ms: number): Promise<boolean>;
}

/**
 * Opens a TLS connection to 127.0.0.1:`port` that offers HTTP/1.1 by ALPN and accepts any
 * certificate (the servers under test have self-signed ones); resolves once the handshake is done.
 */
export function openRawTls(port: number): Promise<RawTlsConnection> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let closed = false;
    const waiters: (() => void)[] = [];
    const socket = connect({ host: "127.0.0.1", port, rejectUnauthorized: false, ALPNProtocols: ["http/1.1"] }, () =>
      resolve({
        socket,
        received: () => Buffer.concat(chunks),
        closedWithin: (ms) =>
          closed
            ? Promise.resolve(true)
            : new Promise((r) => {
                const t = setTimeout(() => r(false), ms);
                waiters.push(() => {
                  clearTimeout(t);
                  r(true);
                });
              }),
      }),
    );
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("close", () => {
      closed = true;
      for (const w of waiters.splice(0)) w();
    });
    // After the handshake, errors are the peer's reset: `closedWithin` reports the close.
    socket.on("error", () => undefined);
    socket.once("error", reject);
  });
}
