import { createPublicKey } from "node:crypto";

/**
 * The public half (SPKI PEM) of a private key given as PEM: what the services a component calls
 * get, derived at deploy time from the component's secret. A bad key throws, naming no key text.
 */
export function publicKeyPemOf(privateKeyPem: string): string {
  const text = privateKeyPem.includes("\\n") && !privateKeyPem.includes("\n") ? privateKeyPem.replace(/\\n/g, "\n") : privateKeyPem;
  let key: ReturnType<typeof createPublicKey>;
  try {
    key = createPublicKey(text.trim());
  } catch (err) {
    throw new Error(`a key secret is not a PEM private key: ${(err as Error).message}`);
  }
  if (key.asymmetricKeyType !== "ed25519") throw new Error(`a key secret must be an Ed25519 key, got ${key.asymmetricKeyType ?? "another kind"}`);
  return key.export({ format: "pem", type: "spki" }).toString();
}
