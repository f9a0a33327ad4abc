import { generateKeyPairSync, type KeyObject } from "node:crypto";
import { COMPONENT_NAMES, type ComponentName } from "@flaplab/component";
import { loadAllComponentKeys, signingKeysOf, verifyingKeysOf } from "./component-keys.js";
import { loadOrCreateKeys } from "./keys.js";
import { createStreamTicketSigner, type StreamTicketSigner } from "./stream-tickets.js";
import { createServiceSigner, createSigner, createVerifier, type ServiceSigner, type Signer, type Verifier } from "./tokens.js";

/** Every credential of a deployment signed and checked with one directory's keys, as a single-machine deployment has them. */
export interface LocalIdentity {
  /** Signs players' tokens. */
  readonly signer: Signer;
  /** Signs component credentials as any component (a runtime's `serviceSigner`). */
  readonly serviceSigner: ServiceSigner;
  /** Checks both: players' tokens and component credentials. */
  readonly verifier: Verifier;
  /** Signs stream tickets, as the initiator does. */
  readonly tickets: StreamTicketSigner;
}

/**
 * The player key pair, every component's key pair and the stream-ticket key in `dir` (each
 * created there if missing; the environment's keys are not read), with a signer for each and one
 * verifier for players' tokens and component credentials. For tests, benchmarks and tools that
 * stand in for a deployment, or for any of its components, on one machine.
 */
export async function openLocalIdentity(dir: string): Promise<LocalIdentity> {
  const keys = await loadOrCreateKeys(dir);
  const components = await loadAllComponentKeys(dir);
  return {
    signer: createSigner({ privateKey: keys.privateKey }),
    serviceSigner: createServiceSigner({ keys: signingKeysOf(components) }),
    verifier: createVerifier({ publicKey: keys.publicKey, componentKeys: verifyingKeysOf(components) }),
    tickets: createStreamTicketSigner({ privateKey: components.tickets.privateKey }),
  };
}

/** A fresh key pair per component, in memory only: for tests that stand in for every component. */
export function generateComponentKeys(): { readonly signing: Map<ComponentName, KeyObject>; readonly verifying: Map<ComponentName, KeyObject> } {
  const pairs = COMPONENT_NAMES.map((c) => [c, generateKeyPairSync("ed25519")] as const);
  return { signing: new Map(pairs.map(([c, k]) => [c, k.privateKey])), verifying: new Map(pairs.map(([c, k]) => [c, k.publicKey])) };
}
