// The Dockerfile player's own parts (./dockerfile-build.ts), and the dependency stage's inputs:
// what `pnpm fetch` reads must be copied before it runs. The whole build is image-build.slow.test.ts.
import { readFile } from "node:fs/promises";
import { join, posix } from "node:path";
import { describe, expect, it } from "vitest";
import { dockerignore, parseDockerfile, rewriteImagePaths } from "./dockerfile-build.js";
import { REPO } from "./helpers.js";

describe("the Dockerfile player", () => {
  it("joins continued lines, drops comments and reads stages with their bases", () => {
    const { globalArgs, stages } = parseDockerfile(
      ["# syntax=docker/dockerfile:1", "ARG BASE=node:24", "FROM $BASE AS build", "RUN a \\", "# inside", " && b", "FROM $BASE", 'CMD ["x"]'].join("\n"),
    );
    expect(globalArgs.get("BASE")).toBe("node:24");
    expect(stages.map((s) => [s.name, s.base, s.instructions.map((i) => `${i.keyword} ${i.args}`)])).toEqual([
      ["build", "node:24", ["RUN a  && b"]],
      [undefined, "node:24", ['CMD ["x"]']],
    ]);
  });

  it("refuses what it cannot play", () => {
    expect(() => parseDockerfile("RUN x")).toThrow(/before the first FROM/);
    expect(() => parseDockerfile("# nothing")).toThrow(/no FROM/);
  });

  it("matches .dockerignore as Docker does: root-anchored patterns, ** for any folders, ! exceptions", () => {
    const ignored = dockerignore(".git\n**/node_modules\n**/dist\n*.log\nsecret/\n!secret/keep\n");
    expect(["node_modules", "apps/a/node_modules/x", "packages/p/dist/i.js", "a.log", ".git/HEAD", "secret/k"].every(ignored)).toBe(true);
    expect(["apps/a.log", ".gitignore", "src/dist.ts", "secret/keep"].some(ignored)).toBe(false);
  });

  it("puts the image's absolute paths under the stage's folder and leaves the system's alone", () => {
    expect(rewriteImagePaths("mkdir -p /var/lib/flaplab && cp /usr/bin/env /app/x", "/R")).toBe("mkdir -p /R/var/lib/flaplab && cp /usr/bin/env /R/app/x");
    expect(rewriteImagePaths("curl https://example.org/a dist/main.js", "/R")).toBe("curl https://example.org/a dist/main.js");
  });
});

describe("apps/server/Dockerfile", () => {
  it("copies every patch pnpm applies before it runs pnpm fetch", async () => {
    const { stages } = parseDockerfile(await readFile(join(REPO, "apps/server/Dockerfile"), "utf8"));
    const build = stages[0]!.instructions;
    const fetchAt = build.findIndex((i) => i.keyword === "RUN" && /\bpnpm fetch\b/.test(i.args));
    expect(fetchAt).toBeGreaterThan(0);
    const copied = build
      .slice(0, fetchAt)
      .filter((i) => i.keyword === "COPY" && !i.args.includes("--from="))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1))
      .map((p) => posix.normalize(p));
    const workspace = await readFile(join(REPO, "pnpm-workspace.yaml"), "utf8");
    const patches = [...workspace.matchAll(/^\s+'?[^:]+'?:\s*(patches\/\S+)$/gm)].map((m) => m[1]!);
    expect(patches.length).toBeGreaterThan(0);
    for (const patch of patches) {
      expect(copied.some((c) => patch === c || patch.startsWith(`${c}/`)), `${patch} is not copied before pnpm fetch`).toBe(true);
    }
    expect(copied).toEqual(expect.arrayContaining(["pnpm-lock.yaml", "pnpm-workspace.yaml"]));
  });
});
