// A throwaway PostgreSQL cluster for tests: initdb in a temporary directory, a server on a free
// loopback port (TCP only, password authentication), stopped and deleted afterwards. Postgres
// refuses to run as root, so under root the cluster belongs to an unprivileged user.
import { execFile, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { appendFile, chown, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { freePorts } from "@flaplab/testkit";
import pg from "pg";

const run = promisify(execFile);

export const POSTGRES_USER = "flaplab";
export const POSTGRES_PASSWORD = "flaplab-test-password";

export interface PostgresServer {
  readonly port: number;
  /** URL of `database` as the test user; `params` go in the query string (sslmode, …). */
  url(database?: string, params?: Readonly<Record<string, string>>): string;
  /** A new empty database; its URL. */
  createDatabase(): Promise<string>;
  /** Runs SQL in `database` as the test user. */
  sql(database: string, text: string): Promise<pg.QueryResult>;
  /** Stops the server (fast shutdown: open connections are closed). The data stays. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same data. */
  start(): Promise<void>;
  /** Stops the server if it runs and deletes the cluster. */
  destroy(): Promise<void>;
}

export interface PostgresServerOptions {
  /** PEM certificate and key: the server then also accepts TLS connections. */
  readonly tls?: { readonly cert: string; readonly key: string };
}

const SETUP_HINT = "Run `pnpm run setup:test` to install them (Debian package postgresql).";

/** The directory holding initdb, pg_ctl and postgres: Debian's newest, else the PATH. */
export async function findPostgresBinDir(): Promise<string> {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root) ? await readdir(root) : [];
  const debian = versions
    .filter((v) => /^\d+$/.test(v))
    .sort((a, b) => Number(b) - Number(a))
    .map((v) => join(root, v, "bin"));
  const onPath = (process.env["PATH"] ?? "").split(delimiter).filter((d) => d !== "");
  const dir = [...debian, ...onPath].find((d) => existsSync(join(d, "initdb")) && existsSync(join(d, "pg_ctl")));
  if (dir === undefined) {
    throw new Error(`PostgreSQL server binaries (initdb, pg_ctl) not found in ${root}/*/bin or on the PATH. ${SETUP_HINT}`);
  }
  return dir;
}

/** Under root: an existing unprivileged account to own the cluster. */
async function clusterOwner(): Promise<{ name: string; uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  for (const name of ["postgres", "nobody"]) {
    try {
      const uid = Number((await run("id", ["-u", name])).stdout.trim());
      const gid = Number((await run("id", ["-g", name])).stdout.trim());
      return { name, uid, gid };
    } catch {
      // no such user: try the next
    }
  }
  throw new Error("running as root, but neither a postgres nor a nobody user exists to run PostgreSQL as");
}

export async function startPostgresServer(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  const bin = await findPostgresBinDir();
  const owner = await clusterOwner();
  const dir = await mkdtemp(join(tmpdir(), "flaplab-postgres-"));
  const dataDir = join(dir, "data");
  const logFile = join(dir, "server.log");
  // Under root, every Postgres program runs as the cluster's owner.
  const command = (tool: string, args: string[]): [string, string[]] =>
    owner ? ["runuser", ["-u", owner.name, "--", join(bin, tool), ...args]] : [join(bin, tool), args];
  const env = { ...process.env, LC_ALL: "C" };
  const asOwner = (tool: string, args: string[]) => {
    const [cmd, argv] = command(tool, args);
    return run(cmd, argv, { env });
  };
  const give = async (path: string) => {
    if (owner) await chown(path, owner.uid, owner.gid);
  };

  let running = false;
  const pgCtl = async (args: string[]) => {
    try {
      await asOwner("pg_ctl", ["-D", dataDir, ...args]);
    } catch (err) {
      const log = await readFile(logFile, "utf8").catch(() => "");
      throw new Error(`pg_ctl ${args.join(" ")} failed: ${(err as Error).message}\n${log.slice(-2000)}`);
    }
  };
  // Should the test process die without destroy(), do not leave a server behind.
  const killOnExit = () => {
    if (running) spawnSync(...command("pg_ctl", ["-D", dataDir, "-m", "immediate", "stop"]));
  };
  process.once("exit", killOnExit);

  try {
    await give(dir);
    const pwFile = join(dir, "password");
    await writeFile(pwFile, POSTGRES_PASSWORD, { mode: 0o600 });
    await give(pwFile);
    await asOwner("initdb", [
      "-D", dataDir, "-U", POSTGRES_USER, `--pwfile=${pwFile}`, "--auth=scram-sha-256",
      "--encoding=UTF8", "--locale=C", "--no-sync", "--no-instructions",
    ]);
    await rm(pwFile);
    const port = (await freePorts(1))[0]!;
    const settings = [
      "listen_addresses = '127.0.0.1'",
      `port = ${port}`,
      "unix_socket_directories = ''",
      // A throwaway cluster: no need to wait for the disk (a clean restart still keeps everything).
      "fsync = off",
      "max_connections = 50",
    ];
    if (options.tls) {
      for (const [name, pem] of [["server.crt", options.tls.cert], ["server.key", options.tls.key]] as const) {
        await writeFile(join(dataDir, name), pem, { mode: 0o600 });
        await give(join(dataDir, name));
      }
      settings.push("ssl = on", "ssl_cert_file = 'server.crt'", "ssl_key_file = 'server.key'");
    }
    await appendFile(join(dataDir, "postgresql.conf"), `\n# flaplab test cluster\n${settings.join("\n")}\n`);

    const start = async () => {
      await pgCtl(["-l", logFile, "-w", "-t", "60", "start"]);
      running = true;
    };
    const stop = async () => {
      if (!running) return;
      await pgCtl(["-m", "fast", "-w", "-t", "60", "stop"]);
      running = false;
    };
    await start();

    const url = (database = "postgres", params: Readonly<Record<string, string>> = {}) => {
      const query = new URLSearchParams(params).toString();
      return `postgres://${POSTGRES_USER}:${POSTGRES_PASSWORD}@127.0.0.1:${port}/${database}${query ? `?${query}` : ""}`;
    };
    const sql = async (database: string, text: string) => {
      const client = new pg.Client({ connectionString: url(database), ssl: false });
      await client.connect();
      try {
        return await client.query(text);
      } finally {
        await client.end();
      }
    };
    let databases = 0;
    return {
      port,
      url,
      sql,
      async createDatabase() {
        const name = `test_${++databases}`;
        await sql("postgres", `CREATE DATABASE ${name}`);
        return url(name);
      },
      stop,
      start,
      async destroy() {
        try {
          await stop();
        } finally {
          process.removeListener("exit", killOnExit);
          await rm(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    killOnExit();
    process.removeListener("exit", killOnExit);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}
