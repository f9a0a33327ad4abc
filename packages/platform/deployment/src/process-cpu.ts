import { readdir, readFile } from "node:fs/promises";

/** Linux's USER_HZ: /proc counts CPU time in ticks of 10 ms. */
const US_PER_TICK = 10_000;

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
 * have used so far, in µs, from /proc at its 10 ms resolution; null where /proc cannot tell (not
 * Linux, or no such process). Children that have exited count only once their parent reaped them.
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
  return roots.map((root) => {
    if (!stats.has(root)) return null;
    let ticks = 0;
    const stack = [root];
    while (stack.length > 0) {
      const pid = stack.pop()!;
      ticks += stats.get(pid)?.ticks ?? 0;
      stack.push(...(childrenOf.get(pid) ?? []));
    }
    return ticks * US_PER_TICK;
  });
}
