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
  readonly spans: readonly ReceivedSpan[];
  close(): Promise<void>;
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

const MAX_BODY_BYTES = 16 * 1024 * 1024;

/**
 * Starts an OTLP/HTTP receiver on 127.0.0.1 (any free port unless `port` is given): `POST
 * /v1/traces` with `content-type: application/json` (what the exporter sends with
 * `OTEL_EXPORTER_OTLP_PROTOCOL=http/json`), gzip or not. For tests and a quick look at what a
 * process exports; not a collector.
 */
export async function startOtlpReceiver(port = 0): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
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
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on("end", () => {
      if (size > MAX_BODY_BYTES) return answer(res, 413, "{}");
      try {
        const raw = Buffer.concat(chunks);
        const text = (req.headers["content-encoding"] === "gzip" ? gunzipSync(raw) : raw).toString("utf8");
        spans.push(...spansOfExport(JSON.parse(text) as JsonExport));
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
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
