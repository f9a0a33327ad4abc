// The image's build without Docker: apps/server/Dockerfile played stage by stage in an empty
// folder (./dockerfile-build.ts), each COPY bringing in only what it names from the build context
// (the repository, minus .dockerignore), each RUN run with only what the earlier steps left. Then
// the last stage's CMD starts from its WORKDIR with its ENV and answers /healthz.
// Slow: pnpm fetch, two installs (better-sqlite3 compiles unless pnpm's store has it built) and
// the whole turbo build, in a fresh copy.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll, describe, expect, it } from "vitest";
import { parseDockerfile, type SimulatedImage, simulateBuild } from "./dockerfile-build.js";
import { REPO, topologyOnFreePorts } from "./helpers.js";

const DOCKERFILE = join(REPO, "apps/server/Dockerfile");

let into = "";
let server: ChildProcess | undefined;
const cleanups: string[] = [];

afterAll(async () => {
  if (server?.pid) {
    try {
      process.kill(-server.pid, "SIGTERM");
    } catch {
      // already gone
    }
  }
  for (const dir of cleanups) await rm(dir, { recursive: true, force: true });
});

describe("apps/server/Dockerfile, built step by step without Docker", () => {
  it("installs the pnpm the image pins (the one RUN skipped for it)", async () => {
    const { stages } = parseDockerfile(await readFile(DOCKERFILE, "utf8"));
    const pinned = stages
      .flatMap((s) => s.instructions)
      .map((i) => /npm install -g pnpm@(\S+)/.exec(i.args)?.[1])
      .find((v) => v !== undefined);
    expect(pinned, "the build stage installs a pinned pnpm").toBeDefined();
    expect(execFileSync("pnpm", ["--version"], { encoding: "utf8" }).trim()).toBe(pinned);
  });

  it("builds from an empty folder, and the last stage's command answers /healthz", async () => {
    into = await mkdtemp(join(tmpdir(), "flaplab-image-"));
    cleanups.push(into);
    const log: string[] = [];
    const started = Date.now();
    let image: SimulatedImage;
    try {
      image = await simulateBuild({
        dockerfile: await readFile(DOCKERFILE, "utf8"),
        context: REPO,
        into,
        // This machine's pnpm and its package store (the image gets the same packages from the registry).
        hostEnv: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: process.env["HOME"] ?? "/root", CI: "1" },
        log: (line) => {
          log.push(line);
          console.log(line);
        },
      });
    } finally {
      await writeFile(join(tmpdir(), "flaplab-image-build.log"), `${log.join("\n")}\n`);
    }
    console.log(`simulated build: ${((Date.now() - started) / 1000).toFixed(0)} s (log: ${join(tmpdir(), "flaplab-image-build.log")})`);
    // Every step but the base image's own ran.
    const skipped = image.steps.filter((s) => s.outcome === "skipped").map((s) => s.note);
    expect(skipped.every((n) => /package manager|global install|users|this machine's user/.test(n ?? ""))).toBe(true);
    expect(image.steps.some((s) => s.instruction.startsWith("RUN pnpm fetch") && s.outcome === "ran")).toBe(true);

    const topo = await topologyOnFreePorts("monolith");
    cleanups.push(topo.dir);
    const [command, ...args] = image.cmd.map((a) => image.inImage(a));
    const env: Record<string, string> = {
      PATH: process.env["PATH"] ?? "/usr/bin:/bin",
      ...Object.fromEntries(Object.entries(image.env).map(([k, v]) => [k, image.inImage(v)])),
      FLAPLAB_TOPOLOGY_JSON: await readFile(topo.file, "utf8"),
      FLAPLAB_GROUP: "monolith",
    };
    const lines: string[] = [];
    server = spawn(command!, args, { cwd: image.inImage(image.workdir), env, stdio: ["ignore", "pipe", "pipe"], detached: true });
    const listening = new Promise<void>((resolve, reject) => {
      server!.once("exit", (code) => reject(new Error(`the image's command exited (${code}):\n${lines.slice(-30).join("\n")}`)));
      for (const stream of [server!.stdout!, server!.stderr!]) {
        createInterface({ input: stream }).on("line", (line) => {
          lines.push(line);
          if (line.includes('"event":"listening"')) resolve();
        });
      }
    });
    await Promise.race([
      listening,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`not listening after 60 s:\n${lines.slice(-30).join("\n")}`)), 60_000)),
    ]);
    const health = (await (await fetch(`http://${topo.addresses["monolith"]}/healthz`)).json()) as { status: string; components: string[] };
    expect(health).toMatchObject({ status: "ok", components: ["auth", "worldgen", "engine", "initiator", "music", "score"] });
    // The image holds production dependencies only: no TypeScript compiler next to the server.
    expect(() => execFileSync("node", ["-e", "require.resolve('typescript')"], { cwd: image.inImage(image.workdir), stdio: "pipe" })).toThrow();
  }, 1_200_000);
});
