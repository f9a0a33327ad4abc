import type { IncomingMessage } from "node:http";
import type { Http2ServerRequest } from "node:http2";

type NodeRequest = IncomingMessage | Http2ServerRequest;

function headerOf(req: NodeRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** The prefix of a gRPC, gRPC-Web or Connect streaming message envelope (flags, then the length). */
export const ENVELOPE_PREFIX_BYTES = 5;

/**
 * Reads the request body of a call whose message may be `readMaxBytes` long: a body of up to
 * `readMaxBytes` + 5 bytes (one message in its envelope) is read whole; a larger one is read to
 * one byte past that (then it is answered resource_exhausted) and the rest dropped, and one whose
 * content-length says so is not read at all (an empty body).
 */
export function readBody(req: NodeRequest, readMaxBytes: number): Promise<Uint8Array> {
  const limit = readMaxBytes + ENVELOPE_PREFIX_BYTES;
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

