import { createHash, X509Certificate } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { generate } from "selfsigned";

/** A TLS certificate for the stream server, with what browsers need to trust it. */
export interface StreamCertificate {
  readonly cert: string;
  readonly key: string;
  /** SHA-256 of the DER certificate, for WebTransport's `serverCertificateHashes`. */
  readonly sha256: Uint8Array;
  readonly notAfter: Date;
}

/**
 * Browsers accept a self-signed certificate by hash (`serverCertificateHashes`) only when it is
 * ECDSA and valid for at most 14 days; 13 leaves a margin.
 */
const VALID_DAYS = 13;
/** The certificate's file in the folder given to `loadOrCreateDevCertificate` (its key: `stream-key.pem`). */
export const DEV_CERTIFICATE_FILE = "stream-cert.pem";
const RENEW_WITHIN_MS = 24 * 3600_000;

export function describeCertificate(cert: string, key: string): StreamCertificate {
  const x509 = new X509Certificate(cert);
  return { cert, key, sha256: createHash("sha256").update(x509.raw).digest(), notAfter: new Date(x509.validTo) };
}

/** A fresh self-signed ECDSA P-256 certificate for 127.0.0.1, ::1 and localhost (plus `hosts`). */
export async function createDevCertificate(hosts: readonly string[] = []): Promise<StreamCertificate> {
  const now = Date.now();
  const names = [...new Set(["localhost", ...hosts.filter((h) => !/^[\d.:]+$/.test(h))])];
  const ips = [...new Set(["127.0.0.1", "::1", ...hosts.filter((h) => /^[\d.:]+$/.test(h))])];
  const pems = await generate([{ name: "commonName", value: "FlapLab stream server" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notBeforeDate: new Date(now - 60_000),
    notAfterDate: new Date(now + VALID_DAYS * 24 * 3600_000),
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, critical: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [...names.map((value) => ({ type: 2 as const, value })), ...ips.map((ip) => ({ type: 7 as const, ip }))],
      },
    ],
  });
  return describeCertificate(pems.cert, pems.private);
}

/**
 * The certificate kept in `<dir>/stream-cert.pem` (+ key), made anew when missing or about to
 * expire. Keeping it means a browser that accepted it once keeps accepting it.
 */
export async function loadOrCreateDevCertificate(dir: string, hosts: readonly string[] = []): Promise<StreamCertificate> {
  const certFile = join(dir, DEV_CERTIFICATE_FILE);
  const keyFile = join(dir, "stream-key.pem");
  try {
    const existing = describeCertificate(await readFile(certFile, "utf8"), await readFile(keyFile, "utf8"));
    if (existing.notAfter.getTime() - Date.now() > RENEW_WITHIN_MS) return existing;
  } catch {
    // missing or unreadable: make a new one
  }
  const fresh = await createDevCertificate(hosts);
  await mkdir(dir, { recursive: true });
  const tag = `${process.pid}.${Date.now()}`;
  await writeFile(`${keyFile}.${tag}`, fresh.key, { mode: 0o600 });
  await writeFile(`${certFile}.${tag}`, fresh.cert);
  await rename(`${keyFile}.${tag}`, keyFile);
  await rename(`${certFile}.${tag}`, certFile);
  return fresh;
}
