import { COMPONENT_NAMES, type ComponentName } from "@flaplab/component";
import { COMPONENT_KEY, COMPONENT_PUBLIC_KEY } from "@flaplab/identity/settings";
import { nameFor } from "@flaplab/settings";
import { CALL_GRAPH } from "../calls.js";
import { ENV } from "./constants.js";

// The keys of a stage: the SST secrets that hold them and which service gets which.

/** The private key of one component, in its service's environment (packages/platform/identity reads it). */
export function componentKeyEnv(component: ComponentName): string {
  return nameFor(COMPONENT_KEY, component);
}

/** The public key of one component, in the environment of the services it calls. */
export function componentPublicKeyEnv(component: ComponentName): string {
  return nameFor(COMPONENT_PUBLIC_KEY, component);
}

/** The SST secret holding each component's own key (Ed25519 private key, PEM). */
export const COMPONENT_KEY_SECRETS = {
  auth: "AuthKey",
  worldgen: "WorldgenKey",
  engine: "EngineKey",
  initiator: "InitiatorKey",
  music: "MusicKey",
  score: "ScoreKey",
} as const satisfies Record<ComponentName, string>;

/**
 * A stage's SST secrets, each Ed25519 PEM: the players' key pair, each component's own key and
 * the stream-ticket key (which no component signs its calls with).
 */
export const SECRET_NAMES = ["JwtPrivateKey", "JwtPublicKey", ...Object.values(COMPONENT_KEY_SECRETS), "StreamTicketKey"] as const;
export type SecretName = (typeof SECRET_NAMES)[number];

/** An environment value known only at deploy time. */
export type DeployValue =
  | { readonly from: "secret"; readonly name: SecretName; readonly sensitive: boolean }
  /** The public half of a secret private key, derived at deploy time: not sensitive. */
  | { readonly from: "public-half"; readonly name: SecretName; readonly sensitive: false }
  | { readonly from: "database"; readonly name: string; readonly sensitive: true }
  | { readonly from: "snapshot-store"; readonly name: string; readonly sensitive: true };

/**
 * The keys a service of `components` gets, and no other: the private key of each component it
 * runs; the public key of each component that calls one of them (the call graph's edges in); the
 * stream-ticket key's private half where the initiator or the engine runs (they sign tickets),
 * its public half where only music runs (it admits streams with them).
 */
export function componentKeysEnvironment(components: readonly ComponentName[]): Record<string, DeployValue> {
  const env: Record<string, DeployValue> = {};
  for (const c of components) env[componentKeyEnv(c)] = { from: "secret", name: COMPONENT_KEY_SECRETS[c], sensitive: true };
  const callers = COMPONENT_NAMES.filter((caller) => !components.includes(caller) && CALL_GRAPH[caller].some((callee) => components.includes(callee)));
  for (const c of callers) env[componentPublicKeyEnv(c)] = { from: "public-half", name: COMPONENT_KEY_SECRETS[c], sensitive: false };
  if (components.includes("initiator") || components.includes("engine")) {
    env[ENV.ticketPrivateKey] = { from: "secret", name: "StreamTicketKey", sensitive: true };
  } else if (components.includes("music")) {
    env[ENV.ticketPublicKey] = { from: "public-half", name: "StreamTicketKey", sensitive: false };
  }
  return env;
}
