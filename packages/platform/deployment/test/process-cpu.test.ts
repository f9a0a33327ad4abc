import { spawn } from "node:child_process";
import { once } from "node:events";
import { describe, expect, it } from "vitest";
import { processTreeCpuUs } from "../src/process-cpu.js";

// A process that starts a child, and both spin until they have used `ms` of CPU (their own
// process.cpuUsage(), so a busy machine slows the spin but does not shorten it), then wait for stdin to close.
const SPIN = (ms: number) =>
  `{ const used = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1000; }; const end = used() + ${ms}; while (used() < end) {} }`;
const TREE = `
const { spawn } = require("node:child_process");
const child = spawn(process.execPath, ["-e", ${JSON.stringify(`${SPIN(400)}; process.stdout.write("spun\\n"); process.stdin.resume();`)}], { stdio: ["pipe", "pipe", "inherit"] });
child.stdout.once("data", () => { ${SPIN(400)}; process.stdout.write("both\\n"); });
process.stdin.on("end", () => { child.stdin.end(); process.exit(0); });
process.stdin.resume();
`;

describe("processTreeCpuUs", () => {
  it("counts a process and the processes it started, while they run", async () => {
    const proc = spawn(process.execPath, ["-e", TREE], { stdio: ["pipe", "pipe", "inherit"] });
    try {
      await new Promise<void>((resolve) => proc.stdout!.on("data", (d: Buffer) => d.toString().includes("both") && resolve()));
      const own = await processTreeCpuUs(proc.pid!);
      // Two 400 ms spins (one in each process), and node's own start-up in both.
      expect(own).toBeGreaterThanOrEqual(700_000);
      expect(own).toBeLessThan(30_000_000);
    } finally {
      proc.stdin!.end();
      await once(proc, "exit");
    }
  });

  it("counts a few milliseconds of CPU finer than /proc's 10 ms ticks", async () => {
    // Once started, spins 25 ms of its own CPU each time a line arrives on stdin, then says so.
    const proc = spawn(process.execPath, ["-e", `process.stdin.on("data", () => { ${SPIN(25)}; process.stdout.write("spun\\n"); }); process.stdout.write("ready\\n");`], { stdio: ["pipe", "pipe", "inherit"] });
    try {
      await new Promise<void>((resolve) => proc.stdout!.once("data", () => resolve()));
      const spins: number[] = [];
      for (let i = 0; i < 3; i++) {
        const before = (await processTreeCpuUs(proc.pid!))!;
        const spun = new Promise<void>((resolve) => proc.stdout!.once("data", () => resolve()));
        proc.stdin!.write("go\n");
        await spun;
        spins.push((await processTreeCpuUs(proc.pid!))! - before);
      }
      // Each reads at least the 25 ms spun (ticks would read 20 ms or 30 ms), and not much more.
      for (const us of spins) {
        expect(us).toBeGreaterThanOrEqual(25_000);
        expect(us).toBeLessThan(100_000);
      }
      expect(spins.some((us) => us % 10_000 !== 0)).toBe(true);
    } finally {
      proc.stdin!.end();
      await once(proc, "exit");
    }
  });

  it("says null for a process that is not there", async () => {
    const proc = spawn(process.execPath, ["-e", ""]);
    await once(proc, "exit");
    expect(await processTreeCpuUs(proc.pid!)).toBeNull();
  });
});
