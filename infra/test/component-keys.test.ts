// Each cloud service gets the private keys of its own components and nothing more: checked over
// every stage's plan, and by loading each service's planned environment the way its server does
// (packages/platform/identity's loadComponentKeys), with real keys standing in for the stage's secrets.
import { generateKeyPairSync } from "node:crypto";
import { COMPONENT_NAMES } from "@flaplab/component";
import { createServiceSigner, createVerifier, hasPrivateKey, loadComponentKeys, signingKeysOf, verifyingKeysOf } from "@flaplab/identity";
import { loadTopology } from "@flaplab/runtime";
import { describe, expect, it } from "vitest";
import { CALL_GRAPH, componentKeyEnv, ENV, planDeployment, publicKeyPemOf, type SecretName, stageTopology } from "../src/index.js";

const STAGES = ["monolith", "microservices", "multiaz", "multiregion", "microservices-sharded"];
const secretPem = new Map<SecretName, string>();
const secret = (name: SecretName): string => {
  let pem = secretPem.get(name);
  if (pem === undefined) secretPem.set(name, (pem = generateKeyPairSync("ed25519").privateKey.export({ format: "pem", type: "pkcs8" }).toString()));
  return pem;
};

describe("the component keys of each cloud service", () => {
  it("are the private keys of its own components only, the public keys of its callers and the ticket key's half it needs", async () => {
    for (const stage of STAGES) {
      const p = planDeployment(await loadTopology(stageTopology(stage)), { stage, domain: "flaplab.example.org" });
      for (const s of p.services) {
        const where = `${stage}/${s.group}`;
        const privateKeys = Object.keys(s.deployEnvironment).filter((k) => k.startsWith("FLAPLAB_COMPONENT_KEY_")).sort();
        expect(privateKeys, where).toEqual(s.components.map(componentKeyEnv).sort());
        for (const k of privateKeys) expect(s.deployEnvironment[k]?.sensitive, `${where} ${k}`).toBe(true);
        const signsTickets = s.components.includes("initiator") || s.components.includes("engine");
        expect(s.deployEnvironment[ENV.ticketPrivateKey] !== undefined, where).toBe(signsTickets);
        expect(s.deployEnvironment[ENV.ticketPublicKey] !== undefined, where).toBe(!signsTickets && s.components.includes("music"));
        // No public key of a component that never calls this service's components.
        for (const c of COMPONENT_NAMES) {
          const calls = !s.components.includes(c) && CALL_GRAPH[c].some((callee) => s.components.includes(callee));
          expect(s.deployEnvironment[`FLAPLAB_COMPONENT_PUBLIC_KEY_${c.toUpperCase()}`] !== undefined, `${where} ${c}`).toBe(calls);
        }
      }
    }
  });

  it("load the way the server loads them, and each edge's credential checks out at its callee", async () => {
    const p = planDeployment(await loadTopology(stageTopology("microservices")), { stage: "microservices", domain: "flaplab.example.org" });
    const loaded = new Map<string, Awaited<ReturnType<typeof loadComponentKeys>>>();
    for (const s of p.services) {
      const env: Record<string, string> = {};
      for (const [k, v] of Object.entries(s.deployEnvironment)) {
        if (v.from === "secret" && v.name !== "JwtPublicKey" && v.name !== "JwtPrivateKey") env[k] = secret(v.name);
        if (v.from === "public-half") env[k] = publicKeyPemOf(secret(v.name));
      }
      const keys = await loadComponentKeys({ components: s.components, env });
      expect([...keys.signing.keys()], s.group).toEqual([...s.components]);
      loaded.set(s.group, keys);
    }
    // Every edge of the call graph: the caller's credential, checked by the callee's keys.
    for (const caller of COMPONENT_NAMES) {
      for (const callee of CALL_GRAPH[caller]) {
        const from = loaded.get(caller)!;
        const to = loaded.get(callee)!;
        const token = await createServiceSigner({ keys: signingKeysOf(from) }).tokenFor(caller, callee, "alice");
        const verifier = createVerifier({ publicKey: generateKeyPairSync("ed25519").publicKey, componentKeys: verifyingKeysOf(to) });
        await expect(verifier.verify(token), `${caller}→${callee}`).resolves.toMatchObject({ service: caller, callee });
      }
    }
    // Music, which only admits streams, holds the ticket key's public half; the initiator and the engine the pair.
    expect(hasPrivateKey(loaded.get("music")!.tickets!)).toBe(false);
    expect(hasPrivateKey(loaded.get("initiator")!.tickets!)).toBe(true);
    expect(hasPrivateKey(loaded.get("engine")!.tickets!)).toBe(true);
    expect(loaded.get("score")!.tickets).toBeUndefined();
  });
});
