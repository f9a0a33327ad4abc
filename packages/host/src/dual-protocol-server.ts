import { createServer as createHttp1Server, type IncomingMessage, type ServerResponse } from "node:http";
import {
  createServer as createHttp2Server,
  type Http2ServerRequest,
  type Http2ServerResponse,
  type ServerHttp2Session,
} from "node:http2";
import { createServer as createTcpServer, type Server, type Socket } from "node:net";

type Handler = (req: IncomingMessage | Http2ServerRequest, res: ServerResponse | Http2ServerResponse) => void;

/** How long close() lets calls in flight finish before it cuts their connections. */
export const CLOSE_GRACE_MS = 3000;

/**
 * One TCP port for HTTP/1.1 and h2c (HTTP/2 with prior knowledge): the first bytes of a connection
 * decide. Node's own servers speak only one of the two without TLS.
 *
 * close() is graceful: no new connections, idle ones closed at once, HTTP/2 sessions told to go
 * away after their open streams, and whatever is still open after CLOSE_GRACE_MS destroyed.
 */
export function createDualProtocolServer(handler: Handler): Server {
  const h1 = createHttp1Server(handler as (req: IncomingMessage, res: ServerResponse) => void);
  const h2 = createHttp2Server(handler as (req: Http2ServerRequest, res: Http2ServerResponse) => void);
  h1.keepAliveTimeout = 65_000;
  const sockets = new Set<Socket>();
  const sessions = new Set<ServerHttp2Session>();
  h2.on("session", (session: ServerHttp2Session) => {
    sessions.add(session);
    session.on("close", () => sessions.delete(session));
  });
  // HTTP/1.1 sockets with a response in progress; every other HTTP/1.1 socket is idle.
  const busy = new Map<Socket, number>();
  h1.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket;
    busy.set(socket, (busy.get(socket) ?? 0) + 1);
    res.on("close", () => {
      const left = (busy.get(socket) ?? 1) - 1;
      if (left > 0) busy.set(socket, left);
      else busy.delete(socket);
      if (closing && left <= 0) socket.end();
    });
  });
  let closing = false;
  const front = createTcpServer((socket) => {
    sockets.add(socket);
    socket.setNoDelay(true);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    socket.once("readable", () => {
      const head = socket.read(3) ?? socket.read();
      if (head === null) return;
      socket.unshift(head);
      const isH2 = (head as Buffer).toString("latin1").startsWith("PRI");
      if (!isH2) {
        h1Sockets.add(socket);
        socket.on("close", () => h1Sockets.delete(socket));
      }
      (isH2 ? h2 : h1).emit("connection", socket);
      if (closing) drain();
    });
  });
  const drain = (): void => {
    for (const s of sessions) if (!s.closed) s.close();
    for (const socket of h1Sockets) if (!busy.has(socket)) socket.end();
  };
  const h1Sockets = new Set<Socket>();
  const close = front.close.bind(front);
  front.close = ((cb?: (err?: Error) => void) => {
    closing = true;
    const result = close(cb);
    drain();
    const cut = setTimeout(() => {
      for (const s of sockets) s.destroy();
    }, CLOSE_GRACE_MS);
    front.once("close", () => {
      clearTimeout(cut);
    });
    return result;
  }) as Server["close"];
  return front;
}
