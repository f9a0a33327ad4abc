import { existsSync } from "node:fs";
import { mkdir, stat, writeFile } from "node:fs/promises";
import { basename, dirname, join, resolve } from "node:path";
import { readPredictionsFile, WHATIF_FILE } from "../whatif/predictions-file.js";
import { buildReport, type Report } from "./aggregate.js";
import { compareStudies } from "./agreement.js";
import { type LoadLevel, readLoadLevels } from "./levels.js";
import { discoverRuns, UsageError, type Problem, type RunData } from "./load.js";
import { metricsJson, renderHtml, renderMarkdown, renderMetricsCsv } from "./render.js";

export interface ReportOptions {
  /** Folders holding FlapLab run folders (or FlappyGo data) anywhere below them. */
  readonly inputs: readonly string[];
  /** FlappyGo data folders (deployment named by their deploy_type file, else the folder name). */
  readonly flappyGo?: readonly string[];
  /** Where report.html, report.md, metrics.csv and metrics.json go (created if missing). */
  readonly outDir: string;
  /**
   * The load levels of a study with `--load` (`<study>/load`); an input folder's own `load/` is read
   * too.
   */
  readonly load?: string;
  /**
   * A what-if validation's predictions (`pnpm whatif --validate`); without it, an input folder's own
   * whatif.json is read, or, for an input folder named `runs`, the one beside it (the study's root).
   */
  readonly whatif?: string;
  /** Base for relative paths; defaults to process.cwd(). */
  readonly cwd?: string;
  readonly now?: Date;
}

export interface ReportResult {
  readonly report: Report;
  readonly files: { readonly html: string; readonly markdown: string; readonly csv: string; readonly json: string };
}

/**
 * Finds the runs, pools them and writes the four report files. Throws UsageError when a folder
 * does not exist or no run is found anywhere.
 */
export async function generateReport(options: ReportOptions): Promise<ReportResult> {
  const cwd = options.cwd ?? process.cwd();
  const inputs = options.inputs.map((p) => resolve(cwd, p));
  const flappyGo = (options.flappyGo ?? []).map((p) => resolve(cwd, p));
  if (inputs.length + flappyGo.length === 0) throw new UsageError("give at least one run folder or --flappygo folder", true);
  const runs: RunData[] = [];
  const problems: Problem[] = [];
  const seen = new Set<string>();
  const add = (found: { runs: RunData[]; problems: Problem[] }): void => {
    for (const r of found.runs) {
      if (seen.has(r.dir)) continue;
      seen.add(r.dir);
      runs.push(r);
    }
    for (const p of found.problems) if (!problems.some((q) => q.path === p.path)) problems.push(p);
  };
  for (const dir of flappyGo) add(await discoverRuns(dir, dir));
  for (const dir of inputs) add(await discoverRuns(dir, dir));
  if (runs.length === 0) {
    throw new UsageError(`no runs found in ${[...inputs, ...flappyGo].join(", ")} (looked for summary.json with format flaplab-run/1 and FlappyGo client_seed_<seed>_run_<n> folders)`);
  }
  if (options.load !== undefined && !(await stat(resolve(cwd, options.load)).catch(() => null))?.isDirectory()) {
    throw new UsageError(`--load: no such folder: ${resolve(cwd, options.load)}`);
  }
  const levels: LoadLevel[] = [];
  const loadDirs = [...new Set([...(options.load === undefined ? [] : [resolve(cwd, options.load)]), ...inputs.map((i) => join(i, "load"))])];
  for (const dir of loadDirs) {
    const found = await readLoadLevels(dir);
    levels.push(...found.levels.filter((l) => !levels.some((k) => k.dir === l.dir)));
    for (const p of found.problems) if (!problems.some((q) => q.path === p.path)) problems.push(p);
  }
  const whatif = await readWhatif(options.whatif === undefined ? null : resolve(cwd, options.whatif), inputs, problems);
  const report = {
    ...buildReport(runs, problems, [...inputs, ...flappyGo], options.now),
    ...(levels.length > 0 ? { levels } : {}),
    ...(whatif === null ? {} : { whatif }),
  };
  const out = resolve(cwd, options.outDir);
  await mkdir(out, { recursive: true });
  const files = {
    html: join(out, "report.html"),
    markdown: join(out, "report.md"),
    csv: join(out, "metrics.csv"),
    json: join(out, "metrics.json"),
  };
  await writeFile(files.html, renderHtml(report));
  await writeFile(files.markdown, renderMarkdown(report));
  await writeFile(files.csv, renderMetricsCsv(report));
  await writeFile(files.json, `${JSON.stringify(metricsJson(report), null, 2)}\n`);
  return { report, files };
}

/** The whatif.json where the options or the study folders say; one that cannot be read becomes a problem and no section. */
async function readWhatif(given: string | null, inputs: readonly string[], problems: Problem[]): Promise<Report["whatif"] | null> {
  if (given !== null && !existsSync(given)) throw new UsageError(`--whatif: no such file: ${given}`);
  const candidates = inputs.flatMap((i) => [join(i, WHATIF_FILE), ...(basename(i) === "runs" ? [join(dirname(i), WHATIF_FILE)] : [])]);
  const path = given ?? candidates.find((c) => existsSync(c));
  if (path === undefined) return null;
  try {
    return { path, file: await readPredictionsFile(path) };
  } catch (err) {
    problems.push({ path, reason: `${err instanceof Error ? err.message : String(err)}; the What-if section is left out` });
    return null;
  }
}

export const USAGE = `usage: pnpm report <run-folder-or-parent> [more…] --out <dir> [--flappygo <flappygo-data-folder>]… [--load <study>/load] [--whatif <whatif.json>]

Finds FlapLab run folders (summary.json with format flaplab-run/1) below each folder, and FlappyGo
client_seed_<seed>_run_<n> folders below each --flappygo folder (repeat the flag for more), groups
the runs by deployment × seed and writes report.html, report.md, metrics.csv and metrics.json into
--out. --load names a study's load levels (pnpm study --load; a folder argument's own load/ is read
too): the report then adds its Load section. --whatif names a what-if validation's predictions
(pnpm whatif --validate; a folder argument's own whatif.json, or the one beside a folder named runs,
is read too): the report then adds its What-if section. Relative paths are resolved against INIT_CWD (set by pnpm), else the current directory.
Exit codes: 0 written, 2 usage error, missing folder or no runs, 1 anything else.

       pnpm report compare <study-a> <study-b>

Prints two studies' paired penalties against the monolith side by side (each a study folder, its
report folder or its metrics.json) and whether each pair of 95 % intervals overlaps: two studies of
the same code at different hours should agree where only the machine's noise differs. Exit code 0
when every interval pair overlaps, 1 when one does not.`;

export interface CliIo {
  readonly cwd: string;
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
}

export interface ParsedArgs {
  readonly inputs: string[];
  readonly flappyGo: string[];
  readonly load: string | null;
  readonly whatif: string | null;
  readonly outDir: string | null;
  readonly help: boolean;
}

export function parseArgs(argv: readonly string[]): ParsedArgs {
  const inputs: string[] = [];
  const flappyGo: string[] = [];
  let outDir: string | null = null;
  let load: string | null = null;
  let whatif: string | null = null;
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.startsWith("--") && arg.includes("=") ? [arg.slice(0, arg.indexOf("=")), arg.slice(arg.indexOf("=") + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined || v === "") throw new UsageError(`${flag} needs a ${flag === "--whatif" ? "file" : "folder"}`, true);
      return v;
    };
    if (flag === "--out" || flag === "-o") outDir = value();
    else if (flag === "--flappygo") flappyGo.push(value());
    else if (flag === "--load") load = value();
    else if (flag === "--whatif") whatif = value();
    else if (flag === "--help" || flag === "-h") help = true;
    else if (flag === "--") {
      inputs.push(...argv.slice(i + 1));
      i = argv.length;
    }
    else if (flag.startsWith("-")) throw new UsageError(`unknown option ${flag}`, true);
    else inputs.push(arg);
  }
  return { inputs, flappyGo, load, whatif, outDir, help };
}

/** The report command. Returns the exit code. */
export async function runReportCli(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    if (argv[0] === "compare") {
      const [a, b, ...rest] = argv.slice(1);
      if (a === undefined || b === undefined || rest.length > 0) throw new UsageError("compare takes two studies: pnpm report compare <study-a> <study-b>", true);
      const { text, rows } = await compareStudies(a, b, io.cwd);
      io.out(text);
      return rows.some((r) => r.overlap === false) ? 1 : 0;
    }
    const args = parseArgs(argv);
    if (args.help) {
      io.out(USAGE);
      return 0;
    }
    if (args.outDir === null) throw new UsageError("--out <dir> is required", true);
    const { report, files } = await generateReport({
      inputs: args.inputs,
      flappyGo: args.flappyGo,
      outDir: args.outDir,
      cwd: io.cwd,
      ...(args.load === null ? {} : { load: args.load }),
      ...(args.whatif === null ? {} : { whatif: args.whatif }),
    });
    const runs = report.groups.flatMap((g) => g.runs);
    const count = (s: string): number => runs.filter((r) => r.status === s).length;
    io.out(
      `report: ${report.groups.length} deployment × seed group(s), ${runs.length} run(s): ${count("ok")} ok, ${count("failed")} failed, ${count("unreadable")} unreadable`,
    );
    for (const r of runs.filter((r) => r.status === "unreadable")) io.err(`unreadable run ${r.dir}: ${r.reason}`);
    for (const p of report.problems) io.err(`skipped ${p.path}: ${p.reason}`);
    for (const f of Object.values(files)) io.out(f);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`report: ${err.message}`);
      if (err.showUsage) io.err(USAGE);
      return 2;
    }
    io.err(`report: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }
}
