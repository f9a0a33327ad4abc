/**
 * The client's runtime configuration, fetched from `/config.json` (served by the dev server from
 * the environment variable FLAPLAB_WEB_CONFIG; see vite.config.ts).
 */
export interface AppConfig {
  /** Base URL of the Connect endpoint serving AuthService. */
  readonly authUrl: string;
  /** Base URL of the Connect endpoint serving InitiatorService. */
  readonly initiatorUrl: string;
  /** Base URL of the Connect endpoint serving ScoreService. */
  readonly scoreUrl: string;
  /** Name of the topology the servers run (shown in the page). */
  readonly topology: string;
  /**
   * True when the stream servers offer HTTP/3, so native WebTransport may be tried first.
   * When false (the default, and always the case for the Node stream server) the WebSocket
   * mapping is used directly.
   */
  readonly http3: boolean;
}

export class ConfigError extends Error {
  override readonly name = "ConfigError";
}

const MONOLITH_URL = "http://127.0.0.1:7070";

/** The configuration for the monolith topology on this machine. */
export const DEFAULT_CONFIG: AppConfig = Object.freeze({
  authUrl: MONOLITH_URL,
  initiatorUrl: MONOLITH_URL,
  scoreUrl: MONOLITH_URL,
  topology: "monolith",
  http3: false,
});

/**
 * Validates a parsed `/config.json`. Base URLs lose trailing slashes. Fields this client does not
 * know are ignored (a newer server may add some). Throws ConfigError.
 */
export function parseConfig(value: unknown): AppConfig {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConfigError("config must be a JSON object");
  }
  const obj = value as Record<string, unknown>;
  const url = (key: "authUrl" | "initiatorUrl" | "scoreUrl"): string => {
    const v = obj[key];
    if (typeof v !== "string" || v === "") throw new ConfigError(`config: ${key} must be a non-empty string`);
    let parsed: URL;
    try {
      parsed = new URL(v);
    } catch {
      throw new ConfigError(`config: ${key} is not a URL: "${v}"`);
    }
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
      throw new ConfigError(`config: ${key} must be an http(s) URL, got "${v}"`);
    }
    return v.replace(/\/+$/, "");
  };
  const topology = obj["topology"];
  if (typeof topology !== "string") throw new ConfigError("config: topology must be a string");
  const http3 = obj["http3"];
  if (http3 !== undefined && typeof http3 !== "boolean") throw new ConfigError("config: http3 must be a boolean");
  return {
    authUrl: url("authUrl"),
    initiatorUrl: url("initiatorUrl"),
    scoreUrl: url("scoreUrl"),
    topology,
    http3: http3 === true,
  };
}

/** Parses the text of `/config.json`. Throws ConfigError for bad JSON or a bad shape. */
export function parseConfigText(text: string): AppConfig {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ConfigError(`config is not valid JSON: ${(err as Error).message}`);
  }
  return parseConfig(value);
}

/** Fetches and validates `/config.json`. */
export async function loadConfig(fetchImpl: typeof fetch = fetch, url = "/config.json"): Promise<AppConfig> {
  const res = await fetchImpl(url, { cache: "no-store" });
  if (!res.ok) throw new ConfigError(`GET ${url}: HTTP ${res.status}`);
  return parseConfigText(await res.text());
}
