import { createHash } from "node:crypto";

/**
 * `candidates` ranked for `key` by rendezvous (highest random weight) hashing: each candidate's
 * weight is a hash of (candidate, key), highest first. Every caller ranks the same way without
 * talking to the others, and removing a candidate moves only the keys that ranked it first.
 */
export function rendezvousRank(key: string, candidates: readonly string[]): string[] {
  return candidates
    .map((name) => ({ name, weight: createHash("sha256").update(name).update("\0").update(key).digest().readBigUInt64BE(0) }))
    .sort((a, b) => (a.weight === b.weight ? (a.name < b.name ? -1 : 1) : a.weight > b.weight ? -1 : 1))
    .map((c) => c.name);
}
