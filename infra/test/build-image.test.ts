// infra/build-image.sh, run with stand-ins for `aws` and `docker` first on PATH: small scripts that
// record their arguments and answer as the real commands would (an account, a repository that exists
// or not, an image that is in the registry or not, a build that succeeds or fails). The script runs
// from a copy inside a throwaway git repository, with the real git, so its tag comes from a real
// commit and real uncommitted changes. Nothing is built or pushed.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { loadTopology } from "@flaplab/runtime";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { planDeployment, stageTopology } from "../src/index.js";

const SCRIPT = resolve(import.meta.dirname, "../build-image.sh");
const ACCOUNT = "123456789012";
const PASSWORD = "stand-in-ecr-password";
/** Separates a recorded call's words (none of the script's arguments contains it). */
const SEP = "\x1f";

const AWS = `#!/usr/bin/env bash
(IFS=$'${SEP}'; printf '%s\\n' "aws$IFS$*") >> "$STANDIN_LOG"
case "$1 $2" in
  "sts get-caller-identity") echo ${ACCOUNT} ;;
  "ecr describe-repositories")
    if [ "$STANDIN_REPOSITORY_EXISTS" = 1 ]; then echo '{"repositories": [{"repositoryName": "x"}]}'
    else echo "An error occurred (RepositoryNotFoundException) when calling the DescribeRepositories operation" >&2; exit 254; fi ;;
  "ecr create-repository") echo '{"repository": {"repositoryName": "x"}}' ;;
  "ecr get-login-password") echo ${PASSWORD} ;;
  *) echo "aws stand-in: unexpected call: $*" >&2; exit 2 ;;
esac
`;

const DOCKER = `#!/usr/bin/env bash
(IFS=$'${SEP}'; printf '%s\\n' "docker$IFS$*") >> "$STANDIN_LOG"
case "$1" in
  login) printf 'docker-stdin${SEP}%s\\n' "$(cat)" >> "$STANDIN_LOG"; echo "Login Succeeded" ;;
  manifest)
    if [ "$STANDIN_IMAGE_EXISTS" = 1 ]; then echo '{"schemaVersion": 2}'
    else echo "no such manifest: $3" >&2; exit 1; fi ;;
  buildx)
    echo "#1 [internal] load build definition from Dockerfile"
    echo "#2 exporting to image" >&2
    [ "$STANDIN_BUILD_FAILS" = 1 ] && { echo "ERROR: failed to solve" >&2; exit 1; }
    exit 0 ;;
  *) echo "docker stand-in: unexpected call: $*" >&2; exit 2 ;;
esac
`;

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Each stand-in call: the tool, then its arguments ("docker-stdin" records what `docker login` read). */
  readonly calls: readonly (readonly string[])[];
}

interface Options {
  readonly repositoryExists?: boolean;
  readonly imageExists?: boolean;
  readonly buildFails?: boolean;
  readonly env?: Record<string, string>;
}

let dir: string;
let repo: string;
let bin: string;

function git(...args: string[]): Buffer {
  return execFileSync("git", args, { cwd: repo, env: gitEnv() });
}

/** An environment with no user or system git configuration. */
function gitEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env["PATH"] ?? "/usr/bin:/bin",
    HOME: dir,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "FlapLab test",
    GIT_AUTHOR_EMAIL: "test@flaplab.example.org",
    GIT_COMMITTER_NAME: "FlapLab test",
    GIT_COMMITTER_EMAIL: "test@flaplab.example.org",
  };
}

function buildImage(o: Options = {}): Run {
  const log = join(dir, `calls-${Date.now()}-${Math.random()}.log`);
  writeFileSync(log, "");
  const r = spawnSync("bash", [join(repo, "infra/build-image.sh")], {
    cwd: dir,
    encoding: "utf8",
    timeout: 20_000,
    env: {
      ...gitEnv(),
      PATH: `${bin}:${process.env["PATH"] ?? "/usr/bin:/bin"}`,
      STANDIN_LOG: log,
      STANDIN_REPOSITORY_EXISTS: o.repositoryExists === false ? "0" : "1",
      STANDIN_IMAGE_EXISTS: o.imageExists === false ? "0" : "1",
      STANDIN_BUILD_FAILS: o.buildFails ? "1" : "0",
      ...o.env,
    },
  });
  const calls = readFileSync(log, "utf8")
    .split("\n")
    .filter((l) => l.length > 0)
    .map((l) => l.split(SEP));
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, calls };
}

const commit12 = (): string => git("rev-parse", "HEAD").toString().trim().slice(0, 12);
/** What the script hashes for a tree with uncommitted changes: the diff against HEAD, then the untracked files' names. */
const changesHash = (): string =>
  createHash("sha256")
    .update(Buffer.concat([git("diff", "HEAD"), git("ls-files", "--others", "--exclude-standard")]))
    .digest("hex")
    .slice(0, 8);
const registry = (region = "us-east-1"): string => `${ACCOUNT}.dkr.ecr.${region}.amazonaws.com`;
const named = (r: Run, tool: string, sub: string): (readonly string[])[] => r.calls.filter((c) => c[0] === tool && c[1] === sub);

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "flaplab-build-image-"));
  bin = join(dir, "bin");
  repo = join(dir, "repo");
  mkdirSync(bin);
  writeFileSync(join(bin, "aws"), AWS);
  writeFileSync(join(bin, "docker"), DOCKER);
  for (const tool of ["aws", "docker"]) chmodSync(join(bin, tool), 0o755);
  mkdirSync(join(repo, "infra"), { recursive: true });
  mkdirSync(join(repo, "apps/server"), { recursive: true });
  copyFileSync(SCRIPT, join(repo, "infra/build-image.sh"));
  writeFileSync(join(repo, "apps/server/Dockerfile"), "FROM scratch\n");
  writeFileSync(join(repo, "apps/server/main.ts"), "export const version = 1;\n");
  writeFileSync(join(repo, ".gitignore"), "ignored/\n");
  git("init", "-q");
  git("add", "-A");
  git("-c", "commit.gpgsign=false", "commit", "-q", "-m", "a commit");
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("infra/build-image.sh", () => {
  it("tags a clean tree with its commit (12 characters), reuses an image already in the registry and prints only its URI", async () => {
    const r = buildImage();
    expect(r.status, r.stderr).toBe(0);
    const image = `${registry()}/flaplab-server:${commit12()}`;
    expect(commit12()).toMatch(/^[0-9a-f]{12}$/);
    expect(r.stdout).toBe(`${image}\n`);
    // (get-login-password and docker login run as one pipeline: each tool's calls in order, not the two interleaved.)
    expect(r.calls.filter((c) => c[0] === "aws")).toEqual([
      ["aws", "sts", "get-caller-identity", "--query", "Account", "--output", "text"],
      ["aws", "ecr", "describe-repositories", "--region", "us-east-1", "--repository-names", "flaplab-server"],
      ["aws", "ecr", "get-login-password", "--region", "us-east-1"],
    ]);
    expect(r.calls.filter((c) => c[0] !== "aws")).toEqual([
      ["docker", "login", "--username", "AWS", "--password-stdin", registry()],
      ["docker-stdin", PASSWORD],
      ["docker", "manifest", "inspect", image],
    ]);
    // What it prints is a FLAPLAB_IMAGE the plan accepts.
    const p = planDeployment(await loadTopology(stageTopology("monolith")), { stage: "monolith", domain: "flaplab.example.org", image: r.stdout.trim() });
    expect(p.image.prebuilt).toBe(image);
  });

  it("creates the repository only when describe-repositories fails", () => {
    const exists = buildImage({ repositoryExists: true });
    expect(named(exists, "aws", "ecr").map((c) => c[2])).toEqual(["describe-repositories", "get-login-password"]);

    const missing = buildImage({ repositoryExists: false });
    expect(missing.status, missing.stderr).toBe(0);
    expect(named(missing, "aws", "ecr")).toEqual([
      ["aws", "ecr", "describe-repositories", "--region", "us-east-1", "--repository-names", "flaplab-server"],
      ["aws", "ecr", "create-repository", "--region", "us-east-1", "--repository-name", "flaplab-server"],
      ["aws", "ecr", "get-login-password", "--region", "us-east-1"],
    ]);
    // create-repository's JSON answer does not reach stdout.
    expect(missing.stdout).toBe(`${registry()}/flaplab-server:${commit12()}\n`);
  });

  it("builds for linux/arm64 from apps/server/Dockerfile and pushes only when the image is not in the registry", () => {
    const image = `${registry()}/flaplab-server:${commit12()}`;
    expect(named(buildImage({ imageExists: true }), "docker", "buildx")).toEqual([]);

    const r = buildImage({ imageExists: false });
    expect(r.status, r.stderr).toBe(0);
    expect(named(r, "docker", "buildx")).toEqual([["docker", "buildx", "build", "--platform", "linux/arm64", "-f", "apps/server/Dockerfile", "-t", image, "--push", "."]]);
    // Logged in first, then asked the registry, then built.
    expect(r.calls.filter((c) => c[0] !== "aws").map((c) => c.slice(0, 2).join(" "))).toEqual(["docker login", `docker-stdin ${PASSWORD}`, "docker manifest", "docker buildx"]);
    // The build's and the login's output go to stderr: stdout is the URI alone.
    expect(r.stdout).toBe(`${image}\n`);
    expect(r.stderr).toContain("#1 [internal] load build definition");
    expect(r.stderr).toContain("Login Succeeded");
    expect(r.stderr).toMatch(new RegExp(`built and pushed ${image.replace(/[.]/g, "\\.")} in \\d+ s`));
  });

  it("prints no URI and fails when the build fails", () => {
    const r = buildImage({ imageExists: false, buildFails: true });
    expect(r.status).not.toBe(0);
    expect(r.stdout).toBe("");
  });

  it("tags a tree with uncommitted changes <commit>-dirty-<hash of the changes>, the same for the same changes", async () => {
    const clean = `${registry()}/flaplab-server:${commit12()}`;
    writeFileSync(join(repo, "apps/server/main.ts"), "export const version = 2;\n");
    const changed = buildImage();
    expect(changed.status, changed.stderr).toBe(0);
    const tag = `${commit12()}-dirty-${changesHash()}`;
    expect(tag).toMatch(/^[0-9a-f]{12}-dirty-[0-9a-f]{8}$/);
    expect(changed.stdout).toBe(`${registry()}/flaplab-server:${tag}\n`);
    expect(buildImage().stdout, "the same changes, the same tag").toBe(changed.stdout);
    const p = planDeployment(await loadTopology(stageTopology("monolith")), { stage: "monolith", domain: "flaplab.example.org", image: changed.stdout.trim() });
    expect(p.image.prebuilt).toBe(changed.stdout.trim());

    writeFileSync(join(repo, "apps/server/main.ts"), "export const version = 3;\n");
    const other = buildImage().stdout;
    expect(other).toMatch(/-dirty-[0-9a-f]{8}\n$/);
    expect(other, "other changes, another tag").not.toBe(changed.stdout);

    // A new file git does not ignore is a change; an ignored one is not.
    git("checkout", "--", "apps/server/main.ts");
    expect(buildImage().stdout).toBe(`${clean}\n`);
    writeFileSync(join(repo, "apps/server/new.ts"), "export {};\n");
    const untracked = buildImage().stdout;
    expect(untracked).toBe(`${registry()}/flaplab-server:${commit12()}-dirty-${changesHash()}\n`);
    rmSync(join(repo, "apps/server/new.ts"));
    mkdirSync(join(repo, "ignored"));
    writeFileSync(join(repo, "ignored/notes.txt"), "not part of the image\n");
    expect(buildImage().stdout).toBe(`${clean}\n`);
  });

  it("uses FLAPLAB_DEFAULT_REGION and FLAPLAB_IMAGE_REPOSITORY when set", () => {
    const r = buildImage({ imageExists: false, env: { FLAPLAB_DEFAULT_REGION: "eu-west-1", FLAPLAB_IMAGE_REPOSITORY: "flaplab-study" } });
    expect(r.status, r.stderr).toBe(0);
    const image = `${registry("eu-west-1")}/flaplab-study:${commit12()}`;
    expect(r.stdout).toBe(`${image}\n`);
    for (const c of named(r, "aws", "ecr")) expect(c.slice(c.indexOf("--region"), c.indexOf("--region") + 2), c.join(" ")).toEqual(["--region", "eu-west-1"]);
    expect(named(r, "aws", "ecr")[0]).toContain("flaplab-study");
    expect(named(r, "docker", "login")[0]!.at(-1)).toBe(registry("eu-west-1"));
    expect(named(r, "docker", "buildx")[0]).toContain(image);
  });
});
