import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import type { Side } from "./suite.js";

const PACKAGE = resolve(import.meta.dirname, "..");

/**
 * The known deviations of one side: config/known-deviations-<side>.txt, one case name or pattern
 * a line (`*` matches within one `/`-separated part of a name, `**` across parts), `#` comments.
 * The reasons are in packages/platform/host/README.md (server) and packages/platform/runtime/README.md (client).
 */
export async function knownDeviations(side: Side): Promise<string[]> {
  const text = await readFile(join(PACKAGE, "config", `known-deviations-${side}.txt`), "utf8");
  return text
    .split("\n")
    .map((line) => line.replace(/#.*$/, "").trim())
    .filter((line) => line.length > 0);
}

/** Whether a case name matches a known deviation's pattern. */
export function matches(pattern: string, name: string): boolean {
  const source = pattern
    .split("**")
    .map((part) => part.split("*").map(escapeRegExp).join("[^/]*"))
    .join(".*");
  return new RegExp(`^${source}$`).test(name);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.+?^${}()|[\]\\]/g, "\\$&");
}

export interface Verdict {
  /** Failing cases no known deviation covers. */
  readonly unexpected: string[];
  /** Known deviations that no failing case matched any more (fixed, or the pattern is stale). */
  readonly stale: string[];
}

/** The failures of a run held against the known deviations. */
export function judge(failures: readonly string[], known: readonly string[]): Verdict {
  return {
    unexpected: failures.filter((name) => !known.some((pattern) => matches(pattern, name))),
    stale: known.filter((pattern) => !failures.some((name) => matches(pattern, name))),
  };
}
