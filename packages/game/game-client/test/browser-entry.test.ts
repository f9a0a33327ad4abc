// The browser entry must not reach a Node-only module: a page bundles it as it is.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "../src");
const NODE_ONLY = /^(node:|ws$|@connectrpc\/connect-node|@fails-components\/webtransport)/;

/** Every module specifier the file imports or re-exports, and the local files among them, followed. */
function importsFrom(file: string, seen = new Set<string>()): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  const text = readFileSync(join(SRC, file), "utf8");
  const specs = [...text.matchAll(/(?:import|export)[^"';]*?from\s+"([^"]+)"|import\("([^"]+)"\)/g)].map((m) => m[1] ?? m[2]!);
  return specs.flatMap((s) => (s.startsWith("./") ? [s, ...importsFrom(s.slice(2).replace(/\.js$/, ".ts"), seen)] : [s]));
}

describe("entries", () => {
  it("index.ts (the browser entry) imports no Node-only module, however deep", () => {
    const specs = importsFrom("index.ts");
    expect(specs.length).toBeGreaterThan(10);
    expect(specs.filter((s) => NODE_ONLY.test(s))).toEqual([]);
  });

  it("node.ts brings the Node transports", () => {
    const specs = importsFrom("node.ts");
    expect(specs).toContain("ws");
    expect(specs).toContain("@connectrpc/connect-node");
  });
});
