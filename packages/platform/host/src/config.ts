import { defaultsOf, minimumsOf, namesOf, readText, readWholeNumbers } from "@flaplab/settings";
import { CORS_ORIGINS, HOST_LIMIT_SETTINGS } from "./settings.js";
/**
 * The host's connection, overload and CORS settings: defaults for local use, each overridable
 * with a FLAPLAB_* environment variable (declared in settings.ts; see docs/settings.md).
 */
export interface HostLimits {
  /** A connection that sends nothing for this long after it opens is closed (ms). Also HTTP/1.1's headers timeout. */
  readonly firstByteTimeoutMs: number;
  /**
   * An HTTP/1.1 keep-alive connection or an h2c session with no call in progress is closed after
   * this long without traffic (ms). Keep it longer than the idle timeout of any load balancer in
   * front (AWS ALB: 60 s), so the balancer, not the server, closes idle connections.
   */
  readonly idleTimeoutMs: number;
  /** Most open TCP connections on the RPC port; further ones are closed at once. */
  readonly maxConnections: number;
  /** Most RPCs handled at the same time. */
  readonly maxConcurrentCalls: number;
  /** Most RPCs waiting for a slot; beyond it calls are shed with `resource_exhausted`. */
  readonly maxQueuedCalls: number;
  /** A call that waited this long for a slot is shed (ms). */
  readonly maxQueueWaitMs: number;
  /** SETTINGS_MAX_CONCURRENT_STREAMS advertised to h2c clients (streams per session). */
  readonly maxStreamsPerSession: number;
  /** Node's http2 `maxSessionMemory` per session, MiB (Node's default is 10). */
  readonly maxSessionMemoryMiB: number;
  /**
   * A call's body must be complete this long after its headers (ms); it holds no call slot or
   * queue place until then, and is cut after (h2c: the stream reset; HTTP/1.1: the connection closed).
   */
  readonly bodyTimeoutMs: number;
  /** Most calls of one connection (h2c session, HTTP/1.1 socket) being received, queued or handled; more are shed. */
  readonly maxCallsPerConnection: number;
  /** Most calls from one client address being received, queued or handled; more are shed. Raise it behind a proxy. */
  readonly maxCallsPerAddress: number;
}

export const DEFAULT_HOST_LIMITS: HostLimits = defaultsOf(HOST_LIMIT_SETTINGS);

/** The environment variable of each limit. */
export const HOST_LIMIT_ENV: { readonly [K in keyof HostLimits]: string } = namesOf(HOST_LIMIT_SETTINGS);

export const CORS_ORIGINS_ENV = CORS_ORIGINS.name;

/** Smallest value of each limit (the queue may be empty; everything else must be positive). */
const MINIMUM: { readonly [K in keyof HostLimits]: number } = minimumsOf(HOST_LIMIT_SETTINGS);

export class HostConfigError extends Error {
  override readonly name = "HostConfigError";
}

/** Completes and checks `limits` (defaults for the missing ones); throws HostConfigError naming the bad one. */
export function resolveHostLimits(limits: Partial<HostLimits> = {}): HostLimits {
  const resolved = { ...DEFAULT_HOST_LIMITS, ...definedOnly(limits) };
  for (const key of Object.keys(MINIMUM) as (keyof HostLimits)[]) {
    const value = resolved[key];
    if (!Number.isInteger(value) || value < MINIMUM[key]) {
      throw new HostConfigError(`${key} must be an integer ≥ ${MINIMUM[key]}, got ${String(value)}`);
    }
  }
  return resolved;
}

/** The limits set in `env` (FLAPLAB_FIRST_BYTE_TIMEOUT_MS, …); unset ones are left out. */
export function hostLimitsFromEnv(env: NodeJS.ProcessEnv): Partial<HostLimits> {
  return readWholeNumbers(env, HOST_LIMIT_SETTINGS, (message) => new HostConfigError(message));
}

/**
 * The browser origins allowed to call the RPC port: FLAPLAB_CORS_ORIGINS (comma-separated origins,
 * e.g. `https://play.example.com,http://127.0.0.1:5173`) when set, else `defaults`.
 */
export function corsOriginsFromEnv(env: NodeJS.ProcessEnv, defaults: readonly string[]): readonly string[] {
  const raw = readText(env, CORS_ORIGINS)?.trim();
  if (raw === undefined || raw === "") return defaults;
  return raw.split(",").map((s) => normalizeOrigin(s.trim(), CORS_ORIGINS_ENV));
}

/** The local web client's origins plus the origin of `webUrl` (a topology's web address), deduplicated. */
export function defaultCorsOrigins(webUrl?: string): readonly string[] {
  const origins = new Set(["http://127.0.0.1:5173", "http://localhost:5173"]);
  if (webUrl !== undefined) {
    const origin = normalizeOrigin(webUrl, "the web address");
    origins.add(origin);
    const url = new URL(origin);
    // The page may be opened under either loopback name.
    if (url.hostname === "127.0.0.1") origins.add(`${url.protocol}//localhost${url.port ? `:${url.port}` : ""}`);
    if (url.hostname === "localhost") origins.add(`${url.protocol}//127.0.0.1${url.port ? `:${url.port}` : ""}`);
  }
  return [...origins];
}

/** `scheme://host[:port]` of a URL or origin; throws HostConfigError for anything else. */
export function normalizeOrigin(value: string, what: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new HostConfigError(`${what}: "${value}" is not an origin like https://play.example.com`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new HostConfigError(`${what}: "${value}" must be an http or https origin`);
  }
  return url.origin;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
