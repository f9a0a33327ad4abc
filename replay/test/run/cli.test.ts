import { spawn } from "node:child_process";
import { mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

// The replay command's clear errors: nothing is replayed and no run folder is written.
const BIN = resolve(import.meta.dirname, "../../bin/replay.ts");
const EASY = resolve(import.meta.dirname, "../../traces/6977347407732442987.csv");
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function temp(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), "flaplab-replay-cli-"));
  dirs.push(d);
  return d;
}

function run(args: string[]): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
    child.on("exit", (code) => done({ code, out, err }));
  });
}

/** A loopback port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as import("node:net").AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

describe("replay command errors", () => {
  it("rejects a broken trace with the file and line, before any run", async () => {
    const dir = await temp();
    const bad = join(dir, "6977347407732442987.csv");
    await writeFile(bad, "code,time,0.011\n57,1000\n57,banana\n");
    const out = join(dir, "out");
    const res = await run(["--url", "http://127.0.0.1:9/", "--trace", bad, "--runs", "1", "--out", out]);
    expect(res.code).toBe(2);
    expect(res.err).toMatch(/bad trace: .*6977347407732442987\.csv.*line 3/);
    expect(await readdir(dir)).not.toContain("out");
  });

  it("reports an unreachable deployment and writes no run folder", async () => {
    const dir = await temp();
    const out = join(dir, "out");
    const res = await run(["--url", `http://127.0.0.1:${await closedPort()}/`, "--trace", EASY, "--runs", "2", "--out", out]);
    expect(res.code).toBe(2);
    expect(res.err).toMatch(/cannot reach the deployment at http:\/\/127\.0\.0\.1:\d+\/: ECONNREFUSED/);
    expect(await readdir(dir)).not.toContain("out");
  });

  it("says which browser is missing and how to get one", async () => {
    const dir = await temp();
    const res = await run(["--url", "http://127.0.0.1:9/", "--trace", EASY, "--out", join(dir, "o"), "--chromium", join(dir, "no-chromium")]);
    expect(res.code).toBe(2);
    expect(res.err).toMatch(/no browser at .*no-chromium: install Debian's chromium/);
  });

  it("explains its usage when arguments are missing or wrong", async () => {
    expect((await run(["--trace", EASY])).err).toMatch(/--url is required/);
    expect((await run(["--url", "http://x/", "--trace", EASY, "--out", "o", "--runs", "0"])).err).toMatch(/--runs must be an integer from 1/);
  });
});
