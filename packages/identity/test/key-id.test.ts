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
    expect(keyId(key)).toBe(RFC8037_KID);
    expect(await calculateJwkThumbprint(jwk, "sha256")).toBe(RFC8037_KID);
  });

  it("agrees with jose's calculateJwkThumbprint for fresh keys, from the private or the public half", async () => {
    for (let i = 0; i < 8; i++) {
      const { privateKey, publicKey } = generateKeyPairSync("ed25519");
      const expected = await calculateJwkThumbprint(publicKey.export({ format: "jwk" }) as JWK, "sha256");
      expect(keyId(publicKey)).toBe(expected);
      expect(keyId(privateKey)).toBe(expected);
      expect(keyId(publicKey.export({ format: "pem", type: "spki" }).toString())).toBe(expected);
    }
  });
});
