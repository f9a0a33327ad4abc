import { readFile } from "node:fs/promises";
import { resolve } from "node:path";

export const REPO = resolve(import.meta.dirname, "../../..");

/** A copy of a repository topology with every group (and the web client) moved to a free loopback port. */
export { repositoryTopologyOnFreePorts as topologyOnFreePorts } from "@flaplab/deployment";

/** Call records of a call-log file. */
export async function readCallLog(file: string): Promise<Array<Record<string, unknown>>> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((r) => r["msg"] === "rpc");
}
