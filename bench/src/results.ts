// latest.json / latest.md: written from the sections of this run, plus, when only some sections
// ran (`--only`), the other sections of the previous results of the same kind (full or quick).
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { Machine } from "./machine.js";
import { metText, type GoalResult, type SectionResult, type SubSection } from "./section.js";
import { renderTable, type Table } from "./table.js";

export const RESULTS_FORMAT = "flaplab-bench/1";

/** One section as stored in latest.json. */
export interface StoredSection {
  readonly title: string;
  /** When the run that measured this section started. */
  readonly startedAt: string;
  readonly seconds: number;
  /** Load average (1 min) before and after the section. */
  readonly loadAvg1m: readonly [number, number];
  readonly notes: readonly string[];
  readonly goals: readonly GoalResult[];
  readonly table: Table;
  readonly subsections?: readonly SubSection[];
  readonly data: unknown;
}

export interface Results {
  readonly format: typeof RESULTS_FORMAT;
  readonly quick: boolean;
  /** When the newest section's run started. */
  readonly startedAt: string;
  /** Duration of the newest run. */
  readonly seconds: number;
  readonly machine: Machine;
  /** In section order. */
  readonly sections: Readonly<Record<string, StoredSection>>;
  readonly failures: readonly { readonly id: string; readonly error: string }[];
  readonly goals: readonly GoalResult[];
}

export function storeSection(s: SectionResult, startedAt: string, loadAvg1m: [number, number]): StoredSection {
  return {
    title: s.title,
    startedAt,
    seconds: s.seconds,
    loadAvg1m,
    notes: s.notes,
    goals: s.goals,
    table: s.table,
    ...(s.subsections ? { subsections: s.subsections } : {}),
    data: s.data,
  };
}

/** The previous latest.json in `dir` when it is of the same kind (full or quick), else undefined. */
export async function readPreviousResults(dir: string, quick: boolean): Promise<Results | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, "latest.json"), "utf8");
  } catch {
    return undefined;
  }
  try {
    const previous = JSON.parse(text) as Results;
    if (previous.format !== RESULTS_FORMAT || previous.quick !== quick || typeof previous.sections !== "object") return undefined;
    return previous;
  } catch {
    return undefined;
  }
}

/**
 * The results to write: this run's sections, and for every section in `order` this run did not
 * measure, the previous results' (each keeps the time of the run that measured it).
 */
export function mergeResults(
  order: readonly string[],
  current: Omit<Results, "goals">,
  previous: Results | undefined,
): Results {
  const sections: Record<string, StoredSection> = {};
  for (const id of order) {
    const fresh = current.sections[id];
    const old = previous?.sections[id];
    if (fresh) sections[id] = fresh;
    else if (old && !current.failures.some((f) => f.id === id)) sections[id] = { ...old, startedAt: old.startedAt ?? previous!.startedAt };
  }
  const goals = Object.values(sections).flatMap((s) => s.goals.map((g) => ({ ...g, met: current.quick ? null : g.met })));
  return { ...current, sections, goals };
}

/** The Markdown of one section: its title, its table and its notes. */
export function renderSection(s: Pick<SectionResult, "title" | "table" | "notes" | "subsections">): string {
  const sub = (s.subsections ?? []).flatMap((t) => ["", `### ${t.title}`, "", renderTable(t.table), "", ...t.notes.map((n) => `- ${n}`)]);
  return [`## ${s.title}`, "", renderTable(s.table), "", ...s.notes.map((n) => `- ${n}`), ...sub].join("\n");
}

/** The goals table; a quick run judges none. */
export function renderGoals(goals: readonly GoalResult[], quick: boolean): string {
  return renderTable({
    headers: ["Section", "Goal", "Measured", "Status"],
    align: ["l", "l", "l", "l"],
    rows: goals.map((g) => [g.section, g.goal, g.measured, quick ? "not judged (quick)" : metText(g.met)]),
  });
}

/** latest.md: the header, every section with when it was measured, the failures and the goals. */
export function renderResults(results: Results, header: string): string {
  const stale = Object.values(results.sections).some((s) => s.startedAt !== results.startedAt);
  return [
    `# FlapLab benchmarks`,
    "",
    header,
    "",
    ...Object.values(results.sections).map((s) => `${renderSection(s)}\n${stale ? `\n_Measured in the run of ${s.startedAt}._\n` : ""}`),
    ...results.failures.map((f) => `## ${f.id}: FAILED\n\n\`\`\`\n${f.error}\n\`\`\`\n`),
    `## Goals`,
    "",
    renderGoals(results.goals, results.quick),
    "",
  ].join("\n");
}
