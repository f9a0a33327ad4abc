import { createPublicKey, generateKeyPairSync, type JsonWebKey } from "node:crypto";
import { calculateJwkThumbprint, type JWK } from "jose";
import { describe, expect, it } from "vitest";
import { keyId } from "../src/index.js";

// RFC 8037 Appendix A.3: the JWK thumbprint of the Ed25519 key of Appendix A.2.
const RFC8037_X = "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo";
const RFC8037_KID = "kPrK_qmxVWaYVA9wwBF6Iuo3vVzz7TxHCTwXBygrS4k";

describe("keyId", () => {
  it("is the RFC 8037 thumbprint of the RFC's Ed25519 key", async () => {
    const jwk: JWK = { kty: "OKP", crv: "Ed25519", x: RFC8037_X };
    const key = createPublicKey({ key: jwk as JsonWebKey, format: "jwk" });
    expect(await keyId(key)).toBe(RFC8037_KID);
  });

  it("is the public key's thumbprint whether given the private half, the public half or its PEM", async () => {
    for (let i = 0; i < 8; i++) {
      const { privateKey, publicKey } = generateKeyPairSync("ed25519");
      const expected = await calculateJwkThumbprint(publicKey.export({ format: "jwk" }) as JWK, "sha256");
      expect(await keyId(publicKey)).toBe(expected);
      expect(await keyId(privateKey)).toBe(expected);
      expect(await keyId(publicKey.export({ format: "pem", type: "spki" }).toString())).toBe(expected);
    }
  });

  it("refuses a key that is not Ed25519 at once", () => {
    const { publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    expect(() => keyId(publicKey)).toThrow(/Ed25519/);
  });
});
