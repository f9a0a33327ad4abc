// Go programs of the bench (bench/go-*): built with Go into .tools/bin, again only when their
// sources change (a marker file beside the binary holds the sources' hash).
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { benchDir, repoDir } from "./child.js";

const SOURCES = ["go.mod", "go.sum", "main.go"];

/** Why Go programs cannot be built here (no Go), or null when they can. */
export async function goUnavailable(program: string): Promise<string | null> {
  try {
    await promisify(execFile)("go", ["version"]);
    return null;
  } catch {
    return `needs Go (Debian's golang-go, or https://go.dev/dl/) to build bench/${program}`;
  }
}

/**
 * Builds bench/<program> into .tools/bin/flaplab-<program> unless the binary was built from these
 * very sources; returns its path. The first build downloads the program's modules (Go proxy).
 */
export async function buildGoProgram(program: string, log: (line: string) => void = () => {}): Promise<string> {
  const sourceDir = join(benchDir(), program);
  const binary = join(repoDir(), ".tools", "bin", `flaplab-${program}`);
  const hash = createHash("sha256");
  for (const file of SOURCES) hash.update(await readFile(join(sourceDir, file)));
  const version = hash.digest("hex");
  const marker = `${binary}.version`;
  if (existsSync(binary) && (await readFile(marker, "utf8").catch(() => "")) === version) return binary;
  log(`  building bench/${program} (Go; the first build downloads its modules)`);
  await mkdir(join(repoDir(), ".tools", "bin"), { recursive: true });
  await promisify(execFile)("go", ["build", "-o", binary, "."], { cwd: sourceDir, env: { ...process.env, GOFLAGS: "-mod=mod" }, timeout: 300_000 });
  await writeFile(marker, version);
  return binary;
}
