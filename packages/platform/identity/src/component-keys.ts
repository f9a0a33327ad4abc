import type { KeyObject } from "node:crypto";
import { join } from "node:path";
import { COMPONENT_NAMES, type ComponentName } from "@flaplab/component";
import { nameFor } from "@flaplab/settings";
import {
  keysFromConfig,
  loadOrCreateKeyFiles,
  publicMaterial,
  readIfExists,
  toPublicKeyObject,
  type KeyMaterial,
  type PublicKeyMaterial,
} from "./keys.js";
import { COMPONENT_KEY, COMPONENT_PUBLIC_KEY, RETIRED_SERVICE_KEY, TICKET_PRIVATE_KEY, TICKET_PUBLIC_KEY } from "./settings.js";

/**
 * The keys a process of the topology holds besides the players' key:
 * - each component it runs has a key pair of its own, which signs the credentials of that
 *   component's calls and nothing else;
 * - every component's public key, to check who calls;
 * - the stream-ticket key, which no component uses for calls: its private half where the
 *   initiator runs (it issues the tickets) or the engine (a draining engine re-issues the tickets
 *   of the games it hands over), its public half where only music runs (it admits streams with
 *   them), nothing elsewhere.
 */
export interface ComponentKeys {
  /** Private keys of the components this process runs. */
  readonly signing: ReadonlyMap<ComponentName, KeyMaterial>;
  /** Public keys of the components whose credentials this process can check (every one it was given). */
  readonly verifying: ReadonlyMap<ComponentName, PublicKeyMaterial>;
  /** The stream-ticket key: a key pair with the initiator or the engine, its public half with music, else undefined. */
  readonly tickets: KeyMaterial | PublicKeyMaterial | undefined;
}

/** The private key of one component, in the environment (PEM text). */
export function componentPrivateKeyEnv(component: ComponentName): string {
  return nameFor(COMPONENT_KEY, component);
}

/** The public key of one component, in the environment (PEM text). */
export function componentPublicKeyEnv(component: ComponentName): string {
  return nameFor(COMPONENT_PUBLIC_KEY, component);
}

export const TICKET_PRIVATE_KEY_ENV = TICKET_PRIVATE_KEY.name;
export const TICKET_PUBLIC_KEY_ENV = TICKET_PUBLIC_KEY.name;
/** The variable of the one key every component shared before each got its own; read only to say so. */
export const RETIRED_SERVICE_KEY_ENV = RETIRED_SERVICE_KEY.name;

/** File names in `<dataDir>/keys/`. */
export function componentKeyFiles(component: ComponentName): { readonly privateFile: string; readonly publicFile: string } {
  return { privateFile: `component-${component}-ed25519.key.pem`, publicFile: `component-${component}-ed25519.pub.pem` };
}
export const TICKET_KEY_FILES = { privateFile: "stream-tickets-ed25519.key.pem", publicFile: "stream-tickets-ed25519.pub.pem" } as const;

/** Which half of the stream-ticket key the components of a process need. */
export function ticketKeyNeed(components: readonly ComponentName[]): "private" | "public" | undefined {
  if (components.includes("initiator") || components.includes("engine")) return "private";
  if (components.includes("music")) return "public";
  return undefined;
}

export interface LoadComponentKeysOptions {
  /** The components this process runs. */
  readonly components: readonly ComponentName[];
  /** Where `keys/` lives when the environment carries no component key. */
  readonly dataDir?: string | undefined;
  /** Defaults to `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined;
}

const isKeyVariable = (name: string): boolean => name.startsWith("FLAPLAB_COMPONENT_") || name.startsWith("FLAPLAB_TICKET_");

/**
 * The keys of a process that runs `components`.
 *
 * From the environment when it carries any `FLAPLAB_COMPONENT_*` or `FLAPLAB_TICKET_*` variable
 * (a cloud task): each component run here needs its `FLAPLAB_COMPONENT_KEY_<NAME>`, and the
 * ticket key's needed half must be there (`FLAPLAB_TICKET_PRIVATE_KEY` with the initiator or the
 * engine, `FLAPLAB_TICKET_PUBLIC_KEY` with music); the others' public
 * keys are taken from `FLAPLAB_COMPONENT_PUBLIC_KEY_<NAME>` where given. A missing key is an
 * error naming the variable.
 *
 * Otherwise from files in `<dataDir>/keys/` (one machine, every process on one data dir): each
 * key pair is created on first use (safe when several processes start at once). A process that
 * needs the public half of a component it does not run, before that component's process has
 * created its pair, creates the pair and keeps only the public half.
 */
export async function loadComponentKeys(opts: LoadComponentKeysOptions): Promise<ComponentKeys> {
  const env = opts.env ?? process.env;
  const components = [...new Set(opts.components)];
  if (env[RETIRED_SERVICE_KEY_ENV]?.trim()) {
    throw new Error(
      `${RETIRED_SERVICE_KEY_ENV} is no longer read: each component has its own key (${componentPrivateKeyEnv("engine")}, …) and stream tickets theirs (${TICKET_PRIVATE_KEY_ENV})`,
    );
  }
  const fromEnv = Object.keys(env).some((name) => isKeyVariable(name) && env[name]?.trim());
  if (fromEnv) return componentKeysFromEnv(components, env);
  if (!opts.dataDir) throw new Error(`no component keys: set ${componentPrivateKeyEnv("engine")} (and the others) or give a data dir`);
  return componentKeysFromFiles(components, opts.dataDir);
}

function pemOf(env: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  return env[name]?.trim() || undefined;
}

async function componentKeysFromEnv(components: readonly ComponentName[], env: Readonly<Record<string, string | undefined>>): Promise<ComponentKeys> {
  const signing = new Map<ComponentName, KeyMaterial>();
  const verifying = new Map<ComponentName, PublicKeyMaterial>();
  for (const component of COMPONENT_NAMES) {
    const privateName = componentPrivateKeyEnv(component);
    const publicName = componentPublicKeyEnv(component);
    const privatePem = pemOf(env, privateName);
    const publicPem = pemOf(env, publicName);
    if (components.includes(component)) {
      if (privatePem === undefined) throw new Error(`${privateName} is not set: this process runs ${component}, which signs its calls with its own key`);
      const keys = await keysFromNamed(privateName, () => keysFromConfig({ privateKeyPem: privatePem, publicKeyPem: publicPem }));
      signing.set(component, keys);
      verifying.set(component, keys);
    } else if (privatePem !== undefined) {
      throw new Error(`${privateName} is set, but this process does not run ${component}: give it only ${publicName}`);
    } else if (publicPem !== undefined) {
      verifying.set(component, await keysFromNamed(publicName, () => keysFromConfig({ publicKeyPem: publicPem })));
    }
  }
  const need = ticketKeyNeed(components);
  const ticketPrivate = pemOf(env, TICKET_PRIVATE_KEY_ENV);
  const ticketPublic = pemOf(env, TICKET_PUBLIC_KEY_ENV);
  let tickets: KeyMaterial | PublicKeyMaterial | undefined;
  if (need === "private") {
    if (ticketPrivate === undefined) throw new Error(`${TICKET_PRIVATE_KEY_ENV} is not set: the initiator and the engine sign stream tickets`);
    tickets = await keysFromNamed(TICKET_PRIVATE_KEY_ENV, () => keysFromConfig({ privateKeyPem: ticketPrivate, publicKeyPem: ticketPublic }));
  } else if (need === "public") {
    if (ticketPrivate !== undefined) throw new Error(`${TICKET_PRIVATE_KEY_ENV} is set, but only the initiator and the engine sign stream tickets: give this process ${TICKET_PUBLIC_KEY_ENV}`);
    if (ticketPublic === undefined) throw new Error(`${TICKET_PUBLIC_KEY_ENV} is not set: music admits streams with it`);
    tickets = await keysFromNamed(TICKET_PUBLIC_KEY_ENV, () => keysFromConfig({ publicKeyPem: ticketPublic }));
  } else if (ticketPrivate !== undefined) {
    throw new Error(`${TICKET_PRIVATE_KEY_ENV} is set, but only the initiator and the engine sign stream tickets`);
  }
  return { signing, verifying, tickets };
}

async function keysFromNamed<T>(variable: string, load: () => Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (err) {
    throw new Error(`${variable}: ${(err as Error).message}`);
  }
}

/** The public half of a key pair in `<dataDir>/keys/`: its public file, else the pair, created if missing. */
async function loadOrCreatePublicKey(dataDir: string, files: { privateFile: string; publicFile: string }): Promise<PublicKeyMaterial> {
  const existing = await readIfExists(join(dataDir, "keys", files.publicFile));
  if (existing !== undefined) {
    try {
      return await publicMaterial(toPublicKeyObject(existing));
    } catch (err) {
      throw new Error(`cannot read the public key ${join(dataDir, "keys", files.publicFile)}: ${(err as Error).message}`);
    }
  }
  const pair = await loadOrCreateKeyFiles(dataDir, files.privateFile, files.publicFile);
  return { kid: pair.kid, publicKey: pair.publicKey, publicKeyPem: pair.publicKeyPem };
}

async function componentKeysFromFiles(components: readonly ComponentName[], dataDir: string): Promise<ComponentKeys> {
  const signing = new Map<ComponentName, KeyMaterial>();
  const verifying = new Map<ComponentName, PublicKeyMaterial>();
  for (const component of COMPONENT_NAMES) {
    const files = componentKeyFiles(component);
    if (components.includes(component)) {
      const keys = await loadOrCreateKeyFiles(dataDir, files.privateFile, files.publicFile);
      signing.set(component, keys);
      verifying.set(component, keys);
    } else {
      verifying.set(component, await loadOrCreatePublicKey(dataDir, files));
    }
  }
  const need = ticketKeyNeed(components);
  const tickets =
    need === "private"
      ? await loadOrCreateKeyFiles(dataDir, TICKET_KEY_FILES.privateFile, TICKET_KEY_FILES.publicFile)
      : need === "public"
        ? await loadOrCreatePublicKey(dataDir, TICKET_KEY_FILES)
        : undefined;
  return { signing, verifying, tickets };
}

/** Every component's key pair and the ticket key pair in `<dataDir>/keys/`: what a test or tool that stands in for any component holds. */
export async function loadAllComponentKeys(dataDir: string): Promise<ComponentKeys & { readonly tickets: KeyMaterial }> {
  const keys = await componentKeysFromFiles([...COMPONENT_NAMES], dataDir);
  return { ...keys, tickets: keys.tickets as KeyMaterial };
}

/** The private keys of the components a process runs, as `createServiceSigner` takes them. */
export function signingKeysOf(keys: ComponentKeys): Map<ComponentName, KeyObject> {
  return new Map([...keys.signing].map(([component, k]) => [component, k.privateKey]));
}

/** The public keys a process checks component credentials with, as `createVerifier` takes them. */
export function verifyingKeysOf(keys: ComponentKeys): Map<ComponentName, KeyObject> {
  return new Map([...keys.verifying].map(([component, k]) => [component, k.publicKey]));
}
