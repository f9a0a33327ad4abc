// Finds the FLAPLAB_* variables the repository's code names: reads (`env["FLAPLAB_X"]`,
// `env.FLAPLAB_X`), names as text (`"FLAPLAB_X"`, a template's `FLAPLAB_X_${…}` prefix), object
// keys of an environment (`FLAPLAB_X: "1"`), and shell reads and writes (`${FLAPLAB_X:-…}`,
// `FLAPLAB_X=…`). Tests and comments are left out.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";

/** A variable named in the code, and where. */
export interface NamedVariable {
  /** The variable; a prefix ending in `_` where the code builds the rest (`FLAPLAB_COMPONENT_KEY_${name}`). */
  readonly name: string;
  /** Path from the repository root, and 1-based line. */
  readonly file: string;
  readonly line: number;
}

export const REPO = resolve(import.meta.dirname, "../..");

/** Where the code lives. */
const ROOTS = ["apps", "packages", "replay", "bench", "infra", "fuzz", "scripts", "sst.config.ts"];
const SKIP_DIRS = new Set(["node_modules", "dist", "test", "results", ".sst", ".data", "test-results"]);
const CODE = /\.(?:ts|mts|cts|js|mjs)$/;
const SHELL = /(?:\.sh|(?:^|\/)Dockerfile)$/;

const NAME = "FLAPLAB_[A-Z0-9_]*";
const CODE_PATTERNS = [
  new RegExp(`["'\`](${NAME})`, "g"), // a string or template that starts with the name
  new RegExp(`\\benv\\.(${NAME})`, "g"), // process.env.FLAPLAB_X
  new RegExp(`(?:^|[{,])\\s*(${NAME})\\s*:`, "g"), // an environment object's key
];
const SHELL_PATTERNS = [new RegExp(`\\$\\{?(${NAME})`, "g"), new RegExp(`\\b(${NAME})=`, "g")];

/** The variables one file names, with their lines. */
export function variablesIn(file: string, text: string): NamedVariable[] {
  const shell = SHELL.test(file);
  const patterns = shell ? SHELL_PATTERNS : CODE_PATTERNS;
  const found: NamedVariable[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = withoutComment(raw, shell);
    for (const pattern of patterns) {
      for (const match of line.matchAll(pattern)) found.push({ name: match[1]!, file, line: i + 1 });
    }
  });
  return found;
}

function withoutComment(line: string, shell: boolean): string {
  const trimmed = line.trimStart();
  if (shell) return trimmed.startsWith("#") ? "" : line.replace(/\s#\s.*$/, "");
  if (trimmed.startsWith("//") || trimmed.startsWith("*") || trimmed.startsWith("/*")) return "";
  return line.replace(/\s\/\/\s.*$/, "").replace(/\/\*.*?\*\//g, "");
}

/** Every variable the repository's code (not its tests) names. */
export function variablesInCode(repo: string = REPO): NamedVariable[] {
  return ROOTS.flatMap((root) => filesUnder(join(repo, root))).flatMap((path) =>
    variablesIn(relative(repo, path), readFileSync(path, "utf8")),
  );
}

function filesUnder(path: string): string[] {
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(path, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOTDIR") return isSource(path) ? [path] : [];
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  return entries.flatMap((entry) => {
    const child = join(path, entry.name);
    if (entry.isDirectory()) return SKIP_DIRS.has(entry.name) || entry.name.startsWith(".") ? [] : filesUnder(child);
    return entry.isFile() && isSource(child) ? [child] : [];
  });
}

function isSource(path: string): boolean {
  if (/\.(?:test|slow\.test)\.[a-z]+$/.test(path)) return false;
  return CODE.test(path) || SHELL.test(path);
}
