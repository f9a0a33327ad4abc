import { access, readdir, readFile } from "node:fs/promises";

/** Linux's USER_HZ: /proc/<pid>/stat counts CPU time in ticks of 10 ms. */
const US_PER_TICK = 10_000;

/**
 * Whether this kernel keeps each thread's time on CPU in ns (/proc/<pid>/task/<tid>/schedstat,
 * the scheduler's own clock). Asked once, so that every reading of a run counts the same way.
 */
let schedstat: Promise<boolean> | undefined;
const hasSchedstat = (): Promise<boolean> =>
  (schedstat ??= access(`/proc/${process.pid}/task/${process.pid}/schedstat`).then(
    () => true,
    () => false,
  ));

/** A process's time on CPU, summed over its threads now, µs (ns precision), or null when it is gone. */
async function threadsCpuUs(pid: number): Promise<number | null> {
  const tids = await readdir(`/proc/${pid}/task`).catch(() => null);
  if (tids === null) return null;
  const ns = await Promise.all(tids.map((tid) => readFile(`/proc/${pid}/task/${tid}/schedstat`, "utf8").then((t) => Number(t.split(" ")[0]), () => 0)));
  return ns.reduce((a, b) => a + b, 0) / 1000;
}

/** utime + stime (ticks) and the parent pid of one process from /proc/<pid>/stat, or null when it is gone. */
async function statOf(pid: number): Promise<{ ppid: number; ticks: number } | null> {
  const text = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => null);
  if (text === null) return null;
  // The command name is in parentheses and may hold spaces: fields are counted after its ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { ppid: Number(fields[1]), ticks: Number(fields[11]) + Number(fields[12]) };
}

/**
 * CPU time (user + system) a process and every process below it (engine shards, workers' helpers)
 * have used so far, in µs; null where /proc cannot tell (not Linux, or no such process). Where the
 * kernel keeps it, the time is the scheduler's, in ns, summed over each process's threads alive
 * now (a thread that has exited drops out: Node's threads live as long as their process); else
 * /proc/<pid>/stat's utime + stime, at its 10 ms resolution. Children that have exited drop out.
 */
export async function processTreeCpuUs(root: number): Promise<number | null> {
  return (await processTreesCpuUs([root]))[0]!;
}

/** `processTreeCpuUs` of each root, from one reading of /proc. */
export async function processTreesCpuUs(roots: readonly number[]): Promise<(number | null)[]> {
  const names = await readdir("/proc").catch(() => [] as string[]);
  const stats = new Map<number, { ppid: number; ticks: number }>();
  await Promise.all(
    [...new Set([...names.filter((n) => /^\d+$/.test(n)).map(Number), ...roots])].map(async (pid) => {
      const s = await statOf(pid);
      if (s !== null) stats.set(pid, s);
    }),
  );
  const childrenOf = new Map<number, number[]>();
  for (const [pid, s] of stats) {
    const siblings = childrenOf.get(s.ppid);
    if (siblings === undefined) childrenOf.set(s.ppid, [pid]);
    else siblings.push(pid);
  }
  const precise = await hasSchedstat();
  return Promise.all(
    roots.map(async (root) => {
      if (!stats.has(root)) return null;
      const tree: number[] = [];
      const stack = [root];
      while (stack.length > 0) {
        const pid = stack.pop()!;
        tree.push(pid);
        stack.push(...(childrenOf.get(pid) ?? []));
      }
      if (!precise) return tree.reduce((sum, pid) => sum + (stats.get(pid)?.ticks ?? 0), 0) * US_PER_TICK;
      const us = await Promise.all(tree.map((pid) => threadsCpuUs(pid)));
      return us.reduce((sum: number, u) => sum + (u ?? 0), 0);
    }),
  );
}
