// What a bench child measures of itself over a step: CPU, wall time and GC pauses.
import { type GcPauses, GcWatch } from "./gc.js";

/** This process's CPU (user + system, µs), wall time (ms) and GC pauses since the last `reset`. */
export class ProcessMeter {
  private cpu0 = process.cpuUsage();
  private t0 = performance.now();
  private readonly gc = new GcWatch();

  /** Starts a new measurement. */
  reset(): void {
    this.gc.stop();
    this.gc.start();
    this.cpu0 = process.cpuUsage();
    this.t0 = performance.now();
  }

  /** What the measurement saw so far; its GC watch stops (the next `reset` starts it again). */
  read(): { cpuUs: number; wallMs: number; gc: GcPauses } {
    const cpu = process.cpuUsage(this.cpu0);
    return { cpuUs: cpu.user + cpu.system, wallMs: performance.now() - this.t0, gc: this.gc.stop() };
  }
}
