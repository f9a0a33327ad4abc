import { mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadTopology } from "@flaplab/runtime";
import { runWhatifCli } from "../src/whatif/cli.js";
import { FIXTURE_STUDY } from "./whatif-fixture.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

async function run(args: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runWhatifCli(args, { cwd: process.cwd(), out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

describe("pnpm whatif", () => {
  it.each([
    [["--study", "/nonexistent/study", "--players", "us-east-1=1"], /^whatif: no study folder at \/nonexistent\/study$/],
    [["--study", FIXTURE_STUDY, "--players", "us-east-1"], /^whatif: --players: "us-east-1" is not <region>=<share>/],
    [["--study", FIXTURE_STUDY, "--players", "us-east-1=-1"], /^whatif: --players: /],
    [["--study", FIXTURE_STUDY, "--players", "mars-north-1=1"], /^whatif: --players: unknown region "mars-north-1" \(the RTT table has us-east-1, /],
    [["--study", FIXTURE_STUDY, "--players", "us-east-1=1", "--regions", "us-east-1,atlantis-1"], /^whatif: --regions: unknown region "atlantis-1"/],
    [["--study", FIXTURE_STUDY], /^whatif: --players <region=share,…> is required/],
    [["--study", FIXTURE_STUDY, "--players", "us-east-1=1", "--top", "zero"], /^whatif: --top must be a whole number/],
    [["--study", FIXTURE_STUDY, "--players", "us-east-1=1", "--bogus"], /^whatif: Unknown option '--bogus'/],
    [["--study", FIXTURE_STUDY, "--players", "us-east-1=1", "--measured", FIXTURE_STUDY], /^whatif: --measured goes with --validate$/],
    [["--study", FIXTURE_STUDY, "--validate", "--leave-one-out", "--runs", "2"], /^whatif: --leave-one-out runs nothing/],
    [["--study", FIXTURE_STUDY, "--validate", "--runs", "0"], /^whatif: --runs must be a whole number from 1 to 100/],
    [["--study", FIXTURE_STUDY, "--players", "us-east-1=1", "--load", "4"], /^whatif: --load goes with --check-capacity$/],
    [["--study", FIXTURE_STUDY, "--check-capacity", "--load", "4,x"], /^whatif: --load must be a whole number from 1 to 200, not "x"$/],
    [["--study", FIXTURE_STUDY, "--players", "us-east-1=1", "--cpu", "x.json"], /^whatif: --cpu goes with --players-online or --check-capacity$/],
    [["--study", FIXTURE_STUDY, "--players", "us-east-1=1", "--game-lengths", "8"], /^whatif: --game-lengths goes with --check-capacity$/],
    [["--study", FIXTURE_STUDY, "--check-capacity", "--load", "4,8", "--game-lengths", "8,17,30"], /^whatif: --game-lengths names 3 lengths for 2 --load levels: one per level$/],
    [["--study", FIXTURE_STUDY, "--check-capacity", "--game-lengths", "8,1,30"], /^whatif: --game-lengths: "1" is not a game length in seconds from 2 to 300$/],
    [["--study", FIXTURE_STUDY, "--check-capacity", "--game-lengths", "8,,30"], /^whatif: --game-lengths: "" is not a game length/],
    [["--study", FIXTURE_STUDY, "--players", "us-east-1=1", "--players-online", "100", "--cpu", "/nonexistent/capacity-check.json"], /^whatif: --cpu \/nonexistent\/capacity-check.json: ENOENT/],
    [["--study", FIXTURE_STUDY, "--players", "us-east-1=1", "--players-online", "100", "--cpu", join(FIXTURE_STUDY, "../../whatif-fixture.ts")], /^whatif: --cpu .*: Unexpected token/],
  ])("refuses %j with one line and exit code 2", async (args, message) => {
    const r = await run(args);
    expect(r.code).toBe(2);
    expect(r.err).toHaveLength(1);
    expect(r.err[0]).toMatch(message);
    expect(r.out).toEqual([]);
  });

  it("validates leave-one-out: a row per deployment, seed and metric, and the median errors", async () => {
    const r = await run(["--validate", "--leave-one-out", "--study", FIXTURE_STUDY]);
    expect(r.code, r.err.join("\n")).toBe(0);
    const text = r.out.join("\n");
    // 4 deployments × the easy seed × 3 metrics, and microservices' hard seed × 3.
    expect(text.match(/^\| (monolith|microservices|multiaz|multiregion) /gm)).toHaveLength(15);
    expect(text).toMatch(/^\| input → audio +\| +[\d.]+ \| +[\d.]+ % \| +\d\/5 \|$/m);
  });

  it("ranks placements, writes the best as topologies that load, and the model as JSON", async () => {
    const out = await mkdtemp(join(tmpdir(), "whatif-cli-"));
    dirs.push(out);
    const r = await run(["--study", FIXTURE_STUDY, "--players", "us-east-1=0.6,eu-west-1=0.4", "--top", "2", "--out", out, "--model-out", join(out, "model.json"), "--players-online", "1000"]);
    expect(r.code, r.err.join("\n")).toBe(0);
    const text = r.out.join("\n");
    expect(text).toMatch(/Placements: \d+ enumerated/);
    expect(text).toMatch(/input → audio: [\d.]+ ms/);
    expect(text).toMatch(/1000 players online/);
    const files = (await readdir(out)).filter((f) => f.startsWith("whatif-")).sort();
    expect(files).toEqual(["whatif-1.json", "whatif-2.json"]);
    for (const f of files) expect((await loadTopology(join(out, f))).groups.length).toBeGreaterThan(0);
    const model = JSON.parse(await readFile(join(out, "model.json"), "utf8")) as { format: string; actions: unknown[] };
    expect(model.format).toBe("flaplab-whatif-model/1");
    expect(model.actions).toHaveLength(3);
  });
});
