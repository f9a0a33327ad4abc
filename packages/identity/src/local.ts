import { loadOrCreateKeys, loadServiceKeys } from "./keys.js";
import { createServiceSigner, createSigner, createVerifier, type ServiceSigner, type Signer, type Verifier } from "./tokens.js";

/** Both kinds of credential signed and checked with one directory's keys, as a single-machine deployment has them. */
export interface LocalIdentity {
  /** Signs players' tokens. */
  readonly signer: Signer;
  /** Signs component credentials (a runtime's `serviceSigner`). */
  readonly serviceSigner: ServiceSigner;
  /** Checks both: players' tokens and component credentials. */
  readonly verifier: Verifier;
}

/**
 * The player key pair and the components' shared key in `dir` (each created there if missing; the
 * environment's keys are not read), with a signer for each and one verifier for both. For tests,
 * benchmarks and tools that stand in for a deployment on one machine.
 */
export async function openLocalIdentity(dir: string): Promise<LocalIdentity> {
  const keys = await loadOrCreateKeys(dir);
  const serviceKeys = await loadServiceKeys({ dataDir: dir, env: {} });
  return {
    signer: createSigner({ privateKey: keys.privateKey }),
    serviceSigner: createServiceSigner({ privateKey: serviceKeys.privateKey }),
    verifier: createVerifier({ publicKey: keys.publicKey, serviceKey: serviceKeys.publicKey }),
  };
}
