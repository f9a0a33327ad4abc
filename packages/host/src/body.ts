import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";

type NodeRequest = IncomingMessage | Http2ServerRequest;

function headerOf(req: NodeRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Reads the request body; stops at `limit` + 1 bytes (Connect then answers resource_exhausted) and drops the rest. */
export function readBody(req: NodeRequest, limit: number): Promise<Uint8Array> {
  const declared = Number(headerOf(req, "content-length"));
  if (declared > limit) {
    // Connect refuses it from the header alone; nothing of it is needed.
    req.resume();
    return Promise.resolve(new Uint8Array(0));
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = (): void => {
      done = true;
      req.off("data", onData);
      req.off("end", finish);
      req.off("error", fail);
      req.off("aborted", fail);
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const fail = (err?: unknown): void => {
      if (done) return;
      done = true;
      req.off("data", onData);
      reject(err instanceof Error ? err : new Error("request aborted"));
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.byteLength;
      if (size > limit) {
        // Enough to know it is too large; the rest is read and dropped.
        finish();
        req.resume();
      }
    };
    req.on("data", onData);
    req.once("end", finish);
    req.once("error", fail);
    req.once("aborted", fail);
  });
}

