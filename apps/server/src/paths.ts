import { resolve } from "node:path";

/** The repository root (apps/server/src → ../../..). */
export const REPO_ROOT = resolve(import.meta.dirname, "../../..");
export const TOPOLOGIES_DIR = resolve(REPO_ROOT, "topologies");
/** Default data directory: keys, SQLite files, call logs. Shared by every topology. */
export const DEFAULT_DATA_DIR = resolve(REPO_ROOT, ".data");

/** A path given on the command line, relative to where the user typed the command. */
export function userPath(p: string): string {
  return resolve(process.env["INIT_CWD"] ?? process.cwd(), p);
}
