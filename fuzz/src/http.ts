// Raw HTTP/1.1 and h2c requests with exactly the bytes and headers a case chose (no client library
// that would refuse or fix them), and the whole answer: status, headers, body, trailers.
import http from "node:http";
import http2 from "node:http2";

export interface Answer {
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly trailers: Record<string, string>;
  readonly body: Buffer;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
let session: http2.ClientHttp2Session | undefined;
let sessionUrl = "";

function flat(h: Record<string, string | string[] | number | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined && !k.startsWith(":")) out[k.toLowerCase()] = Array.isArray(v) ? v.join(", ") : String(v);
  return out;
}

export function post1(baseUrl: string, path: string, headers: Record<string, string>, body: Uint8Array, signal: AbortSignal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(`${baseUrl}${path}`, { method: "POST", headers: { ...headers, "content-length": String(body.length) }, agent, signal }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, headers: flat(res.headers), trailers: flat(res.trailers), body: Buffer.concat(chunks) }),
      );
    });
    req.on("error", reject);
    req.end(body);
  });
}

function h2session(baseUrl: string): http2.ClientHttp2Session {
  if (!session || session.closed || session.destroyed || sessionUrl !== baseUrl) {
    session?.destroy();
    sessionUrl = baseUrl;
    const s = http2.connect(baseUrl);
    s.on("error", () => undefined);
    s.unref();
    session = s;
  }
  return session;
}

export function post2(baseUrl: string, path: string, headers: Record<string, string>, body: Uint8Array, signal: AbortSignal): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let stream: http2.ClientHttp2Stream;
    try {
      stream = h2session(baseUrl).request({ ":method": "POST", ":path": path, ...headers }, { signal });
    } catch (err) {
      session?.destroy();
      reject(err as Error);
      return;
    }
    let status = 0;
    let resHeaders: Record<string, string> = {};
    let trailers: Record<string, string> = {};
    const chunks: Buffer[] = [];
    stream.on("response", (h) => {
      status = Number(h[":status"] ?? 0);
      resHeaders = flat(h);
    });
    stream.on("trailers", (t) => (trailers = flat(t)));
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("error", reject);
    stream.on("close", () => {
      if (status === 0) reject(new Error(`stream closed without a response (RST code ${stream.rstCode})`));
      else resolve({ status, headers: resHeaders, trailers, body: Buffer.concat(chunks) });
    });
    stream.end(body);
  });
}

export function closeClients(): void {
  agent.destroy();
  session?.destroy();
  session = undefined;
}
