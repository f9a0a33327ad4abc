import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { promisify } from "node:util";

const REPO = resolve(import.meta.dirname, "../../../..");
/** Where `pnpm run setup:ghz` puts the pinned ghz (grpc-go's load client). */
export const GHZ = join(REPO, ".tools/bin/ghz");

/** What this project reads of ghz's JSON report (`-O json`). */
export interface GhzReport {
  readonly count: number;
  readonly rps: number;
  readonly statusCodeDistribution?: Record<string, number>;
  readonly errorDistribution?: Record<string, number>;
  /** One entry per call: latency in ns, status name ("OK", "ResourceExhausted", …), error text. */
  readonly details?: readonly { readonly latency: number; readonly status: string; readonly error: string }[];
}

export interface GhzGenerateWorldOptions {
  /** `host:port` of a plaintext (h2c) server of WorldGenService. */
  readonly address: string;
  /** Bearer token sent with every call. */
  readonly token: string;
  /** The load's own flags: `--concurrency=…`, `-n …`, `--async`, `--rps=…`. */
  readonly args: readonly string[];
  readonly gameId: string;
  readonly seed: bigint;
  /** How long ghz may run before it is stopped. */
  readonly timeoutMs: number;
}

/** One ghz run of `WorldGenService.GenerateWorld` on one connection, from the repository's proto files; its JSON report. */
export async function ghzGenerateWorld(o: GhzGenerateWorldOptions): Promise<GhzReport> {
  const { stdout } = await promisify(execFile)(
    GHZ,
    [
      ...o.args,
      "--insecure",
      "--connections=1",
      "--timeout=30s",
      `--proto=${join(REPO, "proto/flaplab/worldgen/v1/worldgen.proto")}`,
      `--import-paths=${join(REPO, "proto")}`,
      "--call=flaplab.worldgen.v1.WorldGenService/GenerateWorld",
      "-d",
      JSON.stringify({ gameId: o.gameId, viewport: { width: 480, height: 640 }, seed: String(o.seed) }),
      "-m",
      JSON.stringify({ authorization: `Bearer ${o.token}` }),
      "-O",
      "json",
      o.address,
    ],
    { timeout: o.timeoutMs, maxBuffer: 512 * 1024 * 1024 },
  );
  return JSON.parse(stdout) as GhzReport;
}
