// A Dockerfile played without Docker: each stage gets a folder of its own as its file system root,
// each COPY brings in only what it names (from the build context, minus .dockerignore, or from an
// earlier stage), and each RUN runs in the stage's WORKDIR with the stage's ENV and ARGs. A RUN
// that needs the base image itself (its package manager, its users) is skipped and logged; the
// machine must already have what it installs. Absolute paths in a RUN or an ENV value are the
// image's, rewritten to the stage's folder, except the system's own (/usr, /bin, /etc, /tmp, …).
import { spawn } from "node:child_process";
import { cp, lstat, mkdir, readdir, readFile } from "node:fs/promises";
import { dirname, join, posix } from "node:path";

export interface Instruction {
  readonly keyword: string;
  readonly args: string;
  /** 1-based line of the instruction's first line. */
  readonly line: number;
}

export interface Stage {
  readonly name?: string;
  readonly base: string;
  readonly instructions: readonly Instruction[];
}

export interface ParsedDockerfile {
  /** ARGs before the first FROM, with their defaults. */
  readonly globalArgs: ReadonlyMap<string, string>;
  readonly stages: readonly Stage[];
}

export class DockerfileError extends Error {
  override readonly name = "DockerfileError";
}

/** Instructions of a Dockerfile: comments and parser directives dropped, continuation lines joined. */
export function parseDockerfile(text: string): ParsedDockerfile {
  const instructions: Instruction[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const first = i + 1;
    let line = lines[i]!;
    if (/^\s*(#|$)/.test(line)) continue;
    while (/\\\s*$/.test(line)) {
      line = line.replace(/\\\s*$/, "");
      // Comment lines inside a continued instruction are dropped, as Docker does.
      while (i + 1 < lines.length && /^\s*#/.test(lines[i + 1]!)) i++;
      if (++i >= lines.length) break;
      line += ` ${lines[i]!.trim()}`;
    }
    const m = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!m) throw new DockerfileError(`line ${first}: not an instruction: ${line}`);
    instructions.push({ keyword: m[1]!.toUpperCase(), args: m[2]!.trim(), line: first });
  }
  const globalArgs = new Map<string, string>();
  const stages: Stage[] = [];
  let current: { name?: string; base: string; instructions: Instruction[] } | undefined;
  for (const ins of instructions) {
    if (ins.keyword === "FROM") {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(ins.args);
      if (!m) throw new DockerfileError(`line ${ins.line}: FROM ${ins.args} is not "image [AS name]"`);
      const base = m[1]!.replace(/\$\{(\w+)\}|\$(\w+)/g, (_, a: string | undefined, b: string | undefined) => globalArgs.get((a ?? b)!) ?? "");
      current = { base, instructions: [], ...(m[2] ? { name: m[2] } : {}) };
      stages.push(current);
    } else if (!current) {
      if (ins.keyword !== "ARG") throw new DockerfileError(`line ${ins.line}: ${ins.keyword} before the first FROM`);
      const [name, value = ""] = splitAssignment(ins.args);
      globalArgs.set(name, value);
    } else {
      current.instructions.push(ins);
    }
  }
  if (stages.length === 0) throw new DockerfileError("the Dockerfile has no FROM");
  return { globalArgs, stages };
}

function splitAssignment(text: string): [string, string | undefined] {
  const eq = text.indexOf("=");
  if (eq < 0) return [text.trim(), undefined];
  return [text.slice(0, eq).trim(), unquote(text.slice(eq + 1).trim())];
}

const unquote = (s: string): string => (/^".*"$|^'.*'$/.test(s) ? s.slice(1, -1) : s);

/** A .dockerignore's patterns as a predicate over context-relative paths (Docker's rules: `**`, `*`, `?`, `!` exceptions, last match wins). */
export function dockerignore(text: string): (path: string) => boolean {
  const rules = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => {
      const exclude = !l.startsWith("!");
      const pattern = posix.normalize((exclude ? l : l.slice(1)).replace(/^\/+/, "")).replace(/\/+$/, "");
      let re = "";
      for (let i = 0; i < pattern.length; i++) {
        const c = pattern[i]!;
        if (c === "*" && pattern[i + 1] === "*") {
          // `**/` is any number of folders (none included); a trailing `**` is anything.
          if (pattern[i + 2] === "/") {
            re += "(?:.*/)?";
            i += 2;
          } else {
            re += ".*";
            i += 1;
          }
        } else if (c === "*") re += "[^/]*";
        else if (c === "?") re += "[^/]";
        else re += c.replace(/[.+^${}()|[\]\\]/g, "\\$&");
      }
      // A pattern that names a folder excludes everything under it.
      return { exclude, re: new RegExp(`^${re}(?:/.*)?$`) };
    });
  return (path) => {
    let ignored = false;
    for (const r of rules) if (r.re.test(path)) ignored = r.exclude;
    return ignored;
  };
}

export interface BuildStep {
  readonly stage: string;
  readonly line: number;
  readonly instruction: string;
  readonly outcome: "ran" | "copied" | "set" | "skipped";
  readonly note?: string;
  readonly seconds: number;
}

export interface SimulatedImage {
  /** The last stage's root folder. */
  readonly root: string;
  readonly workdir: string;
  readonly env: Readonly<Record<string, string>>;
  readonly cmd: readonly string[];
  readonly steps: readonly BuildStep[];
  /** An image path as the path of the same file in the last stage's folder. */
  inImage(path: string): string;
}

export interface BuildOptions {
  readonly dockerfile: string;
  /** The build context (the repository root). */
  readonly context: string;
  /** Empty folder to build in: one sub-folder per stage. */
  readonly into: string;
  readonly buildArgs?: Readonly<Record<string, string>>;
  /** Environment every RUN gets below the stage's own (PATH, HOME: where pnpm and its store are). */
  readonly hostEnv: Readonly<Record<string, string>>;
  /**
   * Why a RUN cannot run here (it needs the base image), or undefined to run it. The default skips
   * the base image's package managers (apt-get, a global npm install) and user changes (chown).
   */
  readonly needsBaseImage?: (command: string) => string | undefined;
  readonly log?: (line: string) => void;
}

export function defaultNeedsBaseImage(command: string): string | undefined {
  if (/\bapt-get\b/.test(command)) return "the base image's package manager (apt-get)";
  if (/\bnpm\s+(install|i)\s+(-g|--global)\b/.test(command)) return "a global install into the base image's Node";
  if (/\bchown\b/.test(command)) return "the base image's users (chown)";
  return undefined;
}

/** Plays the Dockerfile stage by stage; throws (with the step's output) at the first step that fails. */
export async function simulateBuild(opts: BuildOptions): Promise<SimulatedImage> {
  const { globalArgs, stages } = parseDockerfile(opts.dockerfile);
  const needsBaseImage = opts.needsBaseImage ?? defaultNeedsBaseImage;
  const log = opts.log ?? (() => {});
  const ignored = dockerignore(await readFile(join(opts.context, ".dockerignore"), "utf8").catch(() => ""));
  const steps: BuildStep[] = [];
  const roots = new Map<string, string>();
  let last: SimulatedImage | undefined;

  for (const [index, stage] of stages.entries()) {
    const label = stage.name ?? String(index);
    const root = join(opts.into, `stage-${index}-${label}`);
    await mkdir(root, { recursive: true });
    let workdir = "/";
    const env: Record<string, string> = {};
    const args: Record<string, string> = {};
    let cmd: string[] | undefined;
    const expand = (s: string): string =>
      s.replace(/\$\{(\w+)\}|\$(\w+)/g, (whole, a: string | undefined, b: string | undefined) => env[(a ?? b)!] ?? args[(a ?? b)!] ?? whole);

    for (const ins of stage.instructions) {
      const started = Date.now();
      const record = (outcome: BuildStep["outcome"], note?: string) => {
        const step: BuildStep = { stage: label, line: ins.line, instruction: `${ins.keyword} ${ins.args}`, outcome, seconds: (Date.now() - started) / 1000, ...(note ? { note } : {}) };
        steps.push(step);
        log(`[${label}] line ${ins.line} ${outcome} (${step.seconds.toFixed(1)} s): ${short(step.instruction)}${note ? ` — ${note}` : ""}`);
      };
      switch (ins.keyword) {
        case "ARG": {
          const [name, value] = splitAssignment(ins.args);
          args[name] = opts.buildArgs?.[name] ?? value ?? globalArgs.get(name) ?? "";
          record("set");
          break;
        }
        case "ENV": {
          const [name, value] = splitAssignment(ins.args);
          if (value === undefined) throw new DockerfileError(`line ${ins.line}: ENV ${ins.args} is not NAME=value`);
          env[name] = expand(value);
          record("set");
          break;
        }
        case "WORKDIR":
          workdir = posix.resolve(workdir, expand(ins.args));
          await mkdir(join(root, workdir), { recursive: true });
          record("set");
          break;
        case "COPY": {
          const words = ins.args.split(/\s+/);
          const flags = words.filter((w) => w.startsWith("--"));
          const paths = words.filter((w) => !w.startsWith("--")).map(expand);
          const from = flags.find((f) => f.startsWith("--from="))?.slice("--from=".length);
          const unknown = flags.filter((f) => !/^--(from|chown|chmod|link)=/.test(f) && f !== "--link");
          if (unknown.length > 0) throw new DockerfileError(`line ${ins.line}: COPY flags ${unknown.join(" ")} are not simulated`);
          if (paths.length < 2) throw new DockerfileError(`line ${ins.line}: COPY needs a source and a destination`);
          const dest = paths.pop()!;
          const destPath = posix.resolve(workdir, dest);
          const toFolder = dest.endsWith("/") || paths.length > 1;
          for (const src of paths) {
            if (/[*?[]/.test(src)) throw new DockerfileError(`line ${ins.line}: COPY ${src}: wildcards are not simulated`);
            if (from !== undefined) {
              const fromRoot = roots.get(from);
              if (!fromRoot) throw new DockerfileError(`line ${ins.line}: COPY --from=${from}: no earlier stage of that name`);
              await copyTree(join(fromRoot, posix.resolve("/", src)), join(root, destPath), () => false, toFolder, posix.basename(src));
            } else {
              const rel = posix.normalize(src).replace(/^\/+|^\.\/?$/g, "");
              if (rel.startsWith("..")) throw new DockerfileError(`line ${ins.line}: COPY ${src} is outside the build context`);
              if (rel !== "" && ignored(rel)) throw new DockerfileError(`line ${ins.line}: COPY ${src}: excluded by .dockerignore`);
              await copyTree(join(opts.context, rel), join(root, destPath), (p) => ignored(rel === "" ? p : `${rel}/${p}`), toFolder, posix.basename(rel));
            }
          }
          record("copied");
          break;
        }
        case "RUN": {
          const command = expand(ins.args);
          const why = needsBaseImage(command);
          if (why) {
            record("skipped", `needs ${why}`);
            break;
          }
          const rewritten = rewriteImagePaths(command, root);
          const output = await run(rewritten, join(root, workdir), { ...opts.hostEnv, ...args, ...mapEnv(env, root) });
          if (output.code !== 0) {
            record("ran", `exit code ${output.code}`);
            throw new DockerfileError(`[${label}] line ${ins.line}: RUN ${short(command)} failed (exit code ${output.code}):\n${output.text.slice(-4000)}`);
          }
          record("ran");
          break;
        }
        case "CMD": {
          const parsed = JSON.parse(ins.args) as unknown;
          if (!Array.isArray(parsed) || !parsed.every((x) => typeof x === "string")) {
            throw new DockerfileError(`line ${ins.line}: CMD must be in exec form (a JSON array of strings)`);
          }
          cmd = parsed;
          record("set");
          break;
        }
        case "USER":
          record("skipped", "runs as this machine's user");
          break;
        case "EXPOSE":
        case "LABEL":
          record("set");
          break;
        default:
          throw new DockerfileError(`line ${ins.line}: ${ins.keyword} is not simulated`);
      }
    }
    roots.set(label, root);
    roots.set(String(index), root);
    last = {
      root,
      workdir,
      env,
      cmd: cmd ?? [],
      steps,
      inImage: (p) => (p.startsWith("/") ? join(root, p) : p),
    };
  }
  return last!;
}

/** Folders the base image's system owns: paths under them are this machine's too. Any other absolute path is the image's. */
const SYSTEM_FOLDERS = ["usr", "bin", "sbin", "lib", "lib64", "etc", "dev", "proc", "sys", "tmp", "root", "run"];

/** Absolute image paths in a command or value → the same paths under the stage's folder (system folders are left alone). */
export function rewriteImagePaths(text: string, root: string): string {
  const system = SYSTEM_FOLDERS.join("|");
  const re = new RegExp(`(^|[\\s"'=:])(/(?!(?:${system})(?:/|$|[\\s"';&|)]))[A-Za-z0-9_.@-]+(?:/[^\\s"';&|)]*)?)`, "g");
  return text.replace(re, (_, lead: string, p: string) => `${lead}${join(root, p)}`);
}

function mapEnv(env: Readonly<Record<string, string>>, root: string): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, rewriteImagePaths(v, root)]));
}

/**
 * Copies `src` into `dest` as COPY does: a folder's contents go into `dest`; a file goes to
 * `dest` itself, or into it when `dest` is a folder (`toFolder`). `skip` gets paths relative to `src`.
 */
async function copyTree(src: string, dest: string, skip: (rel: string) => boolean, toFolder: boolean, name: string): Promise<void> {
  const info = await lstat(src).catch(() => undefined);
  if (!info) throw new DockerfileError(`COPY: ${src} does not exist`);
  if (!info.isDirectory()) {
    const target = toFolder ? join(dest, name) : dest;
    await mkdir(dirname(target), { recursive: true });
    await cp(src, target, { verbatimSymlinks: true });
    return;
  }
  await mkdir(dest, { recursive: true });
  for (const entry of await readdir(src, { withFileTypes: true })) {
    await walk(entry.name);
  }
  async function walk(rel: string): Promise<void> {
    if (skip(rel)) return;
    const from = join(src, rel);
    const st = await lstat(from);
    if (st.isDirectory()) {
      await mkdir(join(dest, rel), { recursive: true });
      for (const e of await readdir(from)) await walk(`${rel}/${e}`);
    } else {
      await cp(from, join(dest, rel), { verbatimSymlinks: true, preserveTimestamps: true });
    }
  }
}

function run(command: string, cwd: string, env: Record<string, string>): Promise<{ code: number; text: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("sh", ["-c", command], { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    child.stdout.on("data", (d: Buffer) => (text += d.toString()));
    child.stderr.on("data", (d: Buffer) => (text += d.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? 1, text }));
  });
}

const short = (s: string): string => (s.length > 110 ? `${s.slice(0, 107)}…` : s);
