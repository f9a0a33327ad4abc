// Summarizes a V8 .cpuprofile (node --cpu-prof): self time by function and by package.
// Usage: tsx src/profile-summary.ts <file.cpuprofile> [--top 25]
import { readFile } from "node:fs/promises";
import { parseArgs } from "node:util";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileLine {
  readonly name: string;
  readonly selfMs: number;
  readonly share: number;
}

/** Where a script lives, shortened: the package (node_modules) or the workspace path. */
export function placeOf(url: string): string {
  if (url === "") return "(native / V8)";
  const nm = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (nm) return nm[1]!;
  if (url.startsWith("node:")) return url;
  const ws = /\/work\/main\/(.+)$/.exec(url.replace(/^file:\/\//, ""));
  return ws ? ws[1]!.split("/").slice(0, 2).join("/") : url;
}

export function summarizeProfile(profile: Profile, top = 25): { byFunction: ProfileLine[]; byPlace: ProfileLine[]; totalMs: number } {
  const self = new Map<number, number>();
  profile.samples.forEach((id, i) => {
    self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byFn = new Map<string, number>();
  const byPlace = new Map<string, number>();
  for (const node of profile.nodes) {
    const us = self.get(node.id) ?? 0;
    if (us === 0) continue;
    const f = node.callFrame;
    const place = placeOf(f.url);
    const fn = `${f.functionName || "(anonymous)"} ${place}${f.url ? `:${f.lineNumber + 1}` : ""}`;
    byFn.set(fn, (byFn.get(fn) ?? 0) + us);
    byPlace.set(place, (byPlace.get(place) ?? 0) + us);
  }
  const lines = (m: Map<string, number>) =>
    [...m.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => ({ name, selfMs: us / 1000, share: us / total }));
  return { byFunction: lines(byFn), byPlace: lines(byPlace), totalMs: total / 1000 };
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: "string", default: "25" } } });
  const file = positionals[0];
  if (!file) throw new Error("usage: profile-summary <file.cpuprofile> [--top n]");
  const profile = JSON.parse(await readFile(file, "utf8")) as Profile;
  const s = summarizeProfile(profile, Number(values.top));
  const pct = (x: number) => `${(x * 100).toFixed(1).padStart(5)}%`;
  process.stdout.write(`total sampled: ${s.totalMs.toFixed(0)} ms\n\nself time by package:\n`);
  for (const l of s.byPlace) process.stdout.write(`${pct(l.share)}  ${l.selfMs.toFixed(0).padStart(7)} ms  ${l.name}\n`);
  process.stdout.write(`\nself time by function:\n`);
  for (const l of s.byFunction) process.stdout.write(`${pct(l.share)}  ${l.selfMs.toFixed(0).padStart(7)} ms  ${l.name}\n`);
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split("/").pop()!)) {
  main().catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
