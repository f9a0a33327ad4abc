import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

/** One span as an OTLP/HTTP JSON export carries it, with its resource's `service.name`. */
export interface ReceivedSpan {
  readonly serviceName: string;
  readonly traceId: string;
  readonly spanId: string;
  /** Empty for a root span. */
  readonly parentSpanId: string;
  readonly name: string;
  /** OTLP span kind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  readonly kind: number;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  readonly statusCode: number;
}

/** An OTLP/HTTP receiver on loopback that keeps the spans it is sent (JSON encoding only). */
export interface OtlpReceiver {
  /** `http://127.0.0.1:<port>`: the value of `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly endpoint: string;
  /** The first `maxSpans` spans received. */
  readonly spans: readonly ReceivedSpan[];
  /** Spans received beyond `maxSpans`, not kept. */
  readonly dropped: number;
  close(): Promise<void>;
}

export interface OtlpReceiverOptions {
  /** Port on 127.0.0.1 (default 0: any free one). */
  readonly port?: number;
  /** Largest request body, compressed and decompressed alike (default 16 MiB): more is answered 413. */
  readonly maxBodyBytes?: number;
  /** Spans kept (default 20,000); later ones are counted in `dropped`. */
  readonly maxSpans?: number;
}

export const OTLP_SPAN_KIND = { internal: 1, server: 2, client: 3 } as const;

interface JsonValue {
  readonly stringValue?: string;
  readonly intValue?: string | number;
  readonly doubleValue?: number;
  readonly boolValue?: boolean;
}
interface JsonAttribute {
  readonly key: string;
  readonly value?: JsonValue;
}
interface JsonSpan {
  readonly traceId?: string;
  readonly spanId?: string;
  readonly parentSpanId?: string;
  readonly name?: string;
  readonly kind?: number;
  readonly attributes?: readonly JsonAttribute[];
  readonly status?: { readonly code?: number };
}
interface JsonExport {
  readonly resourceSpans?: ReadonlyArray<{
    readonly resource?: { readonly attributes?: readonly JsonAttribute[] };
    readonly scopeSpans?: ReadonlyArray<{ readonly spans?: readonly JsonSpan[] }>;
  }>;
}

function attributeValue(v: JsonValue | undefined): string | number | boolean {
  if (v === undefined) return "";
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.boolValue !== undefined) return v.boolValue;
  return "";
}

function attributesOf(list: readonly JsonAttribute[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const a of list ?? []) out[a.key] = attributeValue(a.value);
  return out;
}

/** The spans of one OTLP JSON `ExportTraceServiceRequest`. */
export function spansOfExport(body: JsonExport): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const rs of body.resourceSpans ?? []) {
    const serviceName = String(attributesOf(rs.resource?.attributes)["service.name"] ?? "");
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        spans.push({
          serviceName,
          traceId: s.traceId ?? "",
          spanId: s.spanId ?? "",
          parentSpanId: s.parentSpanId ?? "",
          name: s.name ?? "",
          kind: s.kind ?? 0,
          attributes: attributesOf(s.attributes),
          statusCode: s.status?.code ?? 0,
        });
      }
    }
  }
  return spans;
}

export const DEFAULT_OTLP_MAX_BODY_BYTES = 16 * 1024 * 1024;
export const DEFAULT_OTLP_MAX_SPANS = 20_000;

/**
 * Starts an OTLP/HTTP receiver on 127.0.0.1 (any free port unless `port` is given): `POST
 * /v1/traces` with `content-type: application/json` (what the exporter sends with
 * `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), gzip or not. For tests and a quick look at what a
 * process exports; not a collector. Bounded: a body over `maxBodyBytes`, before or after gunzip
 * (a small gzip body can inflate to gigabytes), is answered 413 without being inflated further,
 * and at most `maxSpans` spans are kept.
 */
export async function startOtlpReceiver(options: OtlpReceiverOptions | number = {}): Promise<OtlpReceiver> {
  const { port = 0, maxBodyBytes = DEFAULT_OTLP_MAX_BODY_BYTES, maxSpans = DEFAULT_OTLP_MAX_SPANS } = typeof options === "number" ? { port: options } : options;
  const spans: ReceivedSpan[] = [];
  let dropped = 0;
  const answer = (res: ServerResponse, status: number, body: string): void => {
    res.writeHead(status, { "content-type": "application/json" }).end(body);
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    if (req.method !== "POST" || req.url !== "/v1/traces") return answer(res, 404, "{}");
    const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim();
    if (type !== "application/json") return answer(res, 415, JSON.stringify({ message: `only application/json is read, got ${type}` }));
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.byteLength;
      if (size <= maxBodyBytes) chunks.push(c);
    });
    req.on("end", () => {
      if (size > maxBodyBytes) return answer(res, 413, JSON.stringify({ message: `body over ${maxBodyBytes} bytes` }));
      const raw = Buffer.concat(chunks);
      let body: Buffer;
      try {
        // Inflated only up to the limit: zlib stops there with ERR_BUFFER_TOO_LARGE.
        body = req.headers["content-encoding"] === "gzip" ? gunzipSync(raw, { maxOutputLength: maxBodyBytes }) : raw;
      } catch (err) {
        const tooLarge = (err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE";
        return answer(res, tooLarge ? 413 : 400, JSON.stringify({ message: tooLarge ? `decompressed body over ${maxBodyBytes} bytes` : (err as Error).message }));
      }
      try {
        const received = spansOfExport(JSON.parse(body.toString("utf8")) as JsonExport);
        const room = Math.max(0, maxSpans - spans.length);
        for (let i = 0; i < received.length && i < room; i++) spans.push(received[i]!);
        dropped += Math.max(0, received.length - room);
        answer(res, 200, "{}");
      } catch (err) {
        answer(res, 400, JSON.stringify({ message: err instanceof Error ? err.message : String(err) }));
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const { port: bound } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${bound}`,
    spans,
    get dropped() {
      return dropped;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
