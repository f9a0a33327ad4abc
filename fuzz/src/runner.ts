// The generic runner: cases from a target's fast-check arbitrary (fixed seed), one at a time, each
// with a timeout; every outcome is classified; the monolith's health is checked as it goes.
import fc from "fast-check";
import type { FuzzServer } from "./server.js";

export type VerdictKind = "clear" | "accepted" | "crash" | "hang";

export interface Verdict {
  readonly kind: VerdictKind;
  /** The error code / status / close code / message, or what went wrong. */
  readonly detail: string;
}

export const clear = (detail: string): Verdict => ({ kind: "clear", detail });
export const accepted = (detail = "ok"): Verdict => ({ kind: "accepted", detail });
export const crash = (detail: string): Verdict => ({ kind: "crash", detail });

export interface TargetContext {
  /** The running monolith (targets that talk to it). */
  readonly server: FuzzServer;
  readonly signal: AbortSignal;
}

export interface Target<C> {
  readonly name: string;
  /** Needs the monolith. */
  readonly remote: boolean;
  readonly arbitrary: fc.Arbitrary<C>;
  /** Runs one case; throwing counts as a crash of the target (an unclear outcome). */
  run(input: C, ctx: TargetContext): Promise<Verdict>;
  /** The case as text to reproduce it (hex bytes, a file's text…). */
  show(input: C): string;
  /** Per-case timeout, ms. */
  readonly timeoutMs?: number;
  /** Cases run at once (default 1). When the server dies, every case in flight is named. */
  readonly concurrency?: number;
}

export interface Finding {
  readonly target: string;
  readonly index: number;
  readonly kind: "crash" | "hang";
  readonly detail: string;
  readonly input: string;
}

export interface Row {
  readonly target: string;
  cases: number;
  clear: number;
  accepted: number;
  crashes: number;
  hangs: number;
  readonly seed: number;
  /** How often each clear-error detail / accepted detail was seen (top entries in reports). */
  readonly details: Map<string, number>;
  readonly findings: Finding[];
}

export interface RunOptions {
  readonly cases: number;
  readonly seed: number;
  readonly server?: FuzzServer;
  /** Stop a target after this many crashes and hangs (each may have cost a restart). */
  readonly maxFindings?: number;
  /** Run only these case indices (reproduction). */
  readonly only?: readonly number[];
  readonly onProgress?: (row: Row) => void;
}

const BATCH = 250;
const DEFAULT_TIMEOUT_MS = 5_000;

/** Case `i` of a target: batch `floor(i / 250)` sampled with seed `seed + batch`, position `i % 250`. */
function* casesOf<C>(arb: fc.Arbitrary<C>, seed: number, count: number, only?: readonly number[]): Generator<[number, C]> {
  if (only) {
    for (const i of only) {
      const batch = fc.sample(arb, { seed: seed + Math.floor(i / BATCH), numRuns: BATCH });
      yield [i, batch[i % BATCH]!];
    }
    return;
  }
  for (let start = 0; start < count; start += BATCH) {
    const batch = fc.sample(arb, { seed: seed + start / BATCH, numRuns: BATCH });
    for (let j = 0; j < BATCH && start + j < count; j++) yield [start + j, batch[j]!];
  }
}

export async function runTarget<C>(target: Target<C>, opts: RunOptions): Promise<Row> {
  const row: Row = { target: target.name, cases: 0, clear: 0, accepted: 0, crashes: 0, hangs: 0, seed: opts.seed, details: new Map(), findings: [] };
  const server = target.remote ? opts.server : undefined;
  if (target.remote && !server) throw new Error(`target ${target.name} needs the monolith`);
  const timeoutMs = target.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxFindings = opts.maxFindings ?? 5;
  const concurrency = target.concurrency ?? 1;

  const count = (kind: VerdictKind, detail: string): void => {
    row.cases++;
    if (kind === "clear") row.clear++;
    else if (kind === "accepted") row.accepted++;
    else if (kind === "crash") row.crashes++;
    else row.hangs++;
    const key = `${kind}: ${detail}`.slice(0, 120);
    row.details.set(key, (row.details.get(key) ?? 0) + 1);
  };

  // Cases in flight (index → input), the last finished one, and the server's generation: a case
  // that started before a restart is dropped, not counted.
  const inflight = new Map<number, C>();
  const running = new Set<Promise<void>>();
  let last: [number, C] | undefined;
  let recovering: Promise<void> | undefined;
  let started = 0;

  /** The server died or hung: one finding naming every case that may have caused it, then a restart. */
  const recover = (kind: "crash" | "hang", detail: string, i: number, input: C): void => {
    if (recovering) return;
    const suspects = [[i, input] as [number, C], ...[...inflight].filter(([j]) => j !== i), ...(last ? [last] : [])];
    count(kind, detail);
    row.findings.push({
      target: target.name,
      index: i,
      kind,
      detail,
      input: suspects.map(([j, x], n) => `${n === 0 ? "" : `\n  or case ${j}: `}${target.show(x)}`).join(""),
    });
    // Cases in flight never wait for the recovery, so waiting for them here cannot deadlock.
    recovering = (async () => {
      await Promise.allSettled([...running]);
      await server!.restart();
    })().finally(() => (recovering = undefined));
  };

  const one = async (i: number, input: C): Promise<void> => {
    const generation = server?.restarts ?? 0;
    inflight.set(i, input);
    try {
      const verdict = await runOne(target, input, server, timeoutMs);
      if (server && server.restarts !== generation) return; // dropped: the server was restarted under it
      // After every case the server must still answer /healthz: a server that died while (or just
      // after) handling the case makes it a crash whatever the client saw, one that hangs a hang.
      if (server && !(await server.healthy(verdict.kind === "hang" ? 5_000 : 2_000))) {
        if (server.restarts !== generation) return;
        if (await server.exitsWithin(1_000)) return recover("crash", `server process exited (${server.exitReason()})`, i, input);
        return recover("hang", `${verdict.kind === "hang" ? `${verdict.detail}; ` : ""}/healthz stopped answering`, i, input);
      }
      count(verdict.kind, verdict.detail);
      if (verdict.kind === "crash" || verdict.kind === "hang") {
        row.findings.push({ target: target.name, index: i, kind: verdict.kind, detail: verdict.detail, input: target.show(input) });
      }
      last = [i, input];
    } finally {
      inflight.delete(i);
    }
  };

  for (const [i, input] of casesOf(target.arbitrary, opts.seed, opts.cases, opts.only)) {
    if (row.findings.length >= maxFindings) break;
    while (running.size >= concurrency) await Promise.race(running);
    if (recovering) await recovering;
    const p: Promise<void> = one(i, input).finally(() => running.delete(p));
    running.add(p);
    started++;
    if (started % 500 === 0) opts.onProgress?.(row);
  }
  await Promise.allSettled([...running]);
  if (recovering) await recovering;
  if (server && last && (await server.exitsWithin(200))) {
    recover("crash", `server process exited after the last cases (${server.exitReason()})`, last[0], last[1]);
    await recovering;
  }
  if (server && !(await server.healthy())) {
    row.findings.push({ target: target.name, index: -1, kind: "hang", detail: "/healthz did not answer after the target", input: "" });
    row.hangs++;
    await server.restart();
  }
  return row;
}

async function runOne<C>(target: Target<C>, input: C, server: FuzzServer | undefined, timeoutMs: number): Promise<Verdict> {
  const ac = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<Verdict>((resolve) => {
    timer = setTimeout(() => {
      ac.abort(new Error("case timed out"));
      resolve({ kind: "hang", detail: `no outcome within ${timeoutMs} ms` });
    }, timeoutMs);
  });
  try {
    const ctx = { server: server!, signal: ac.signal };
    return await Promise.race([
      target.run(input, ctx).catch((err: unknown) => crash(`unexpected ${(err as Error)?.name ?? "error"}: ${(err as Error)?.message ?? String(err)}`)),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
    ac.abort(new Error("case over"));
  }
}

/** The table: target | cases | clear errors | accepted | crashes | hangs | seed. */
export function formatTable(rows: readonly Row[]): string {
  const head = ["target", "cases", "clear errors", "accepted", "crashes", "hangs", "seed"];
  const body = rows.map((r) => [r.target, r.cases, r.clear, r.accepted, r.crashes, r.hangs, r.seed].map(String));
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(" | ")} |`;
  const sep = `|${widths.map((w, i) => (i === 0 ? "-".repeat(w + 2) : `${"-".repeat(w + 1)}:`)).join("|")}|`;
  return [line(head), sep, ...body.map(line)].join("\n");
}
