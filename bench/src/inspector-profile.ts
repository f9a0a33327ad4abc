// CPU profiles of a window of a process's life, through the inspector (same format as --cpu-prof).
import { writeFile } from "node:fs/promises";
import { Session } from "node:inspector/promises";

let session: Session | undefined;

export async function startProfile(intervalUs = 200): Promise<void> {
  if (session) return;
  session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: intervalUs });
  await session.post("Profiler.start");
}

/** Stops the profile and writes it to `file` (a .cpuprofile). */
export async function stopProfile(file: string): Promise<void> {
  if (!session) throw new Error("no profile running");
  const { profile } = await session.post("Profiler.stop");
  session.disconnect();
  session = undefined;
  await writeFile(file, JSON.stringify(profile));
}
