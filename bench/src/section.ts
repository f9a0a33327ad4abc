import type { Table } from "./table.js";

/** A goal and whether this run met it (null: not measurable in this run). */
export interface GoalResult {
  readonly section: string;
  readonly goal: string;
  readonly measured: string;
  readonly met: boolean | null;
}

/** A further table of a section, with its own heading and notes. */
export interface SubSection {
  readonly title: string;
  readonly table: Table;
  readonly notes: readonly string[];
}

/** What each section hands back: one table, a few notes under it, its numbers and its goals. */
export interface SectionResult {
  readonly id: string;
  readonly title: string;
  readonly table: Table;
  readonly notes: readonly string[];
  /** Further tables, printed after the notes. */
  readonly subsections?: readonly SubSection[];
  readonly goals: readonly GoalResult[];
  readonly data: unknown;
  readonly seconds: number;
}

export interface RunOptions {
  readonly quick: boolean;
  /** A scratch directory for keys, data and run folders. */
  readonly workDir: string;
  /** Progress lines (stderr). */
  readonly log: (line: string) => void;
}

export const metText = (met: boolean | null): string => (met === null ? "n/a" : met ? "met" : "missed");
