import { text } from "@flaplab/settings";

/** Marks the bench's child processes (`child.ts` sets it). */
export const BENCH_CHILD = text({
  name: "FLAPLAB_BENCH_CHILD",
  format: "`1`",
  description: "marks the bench's child processes (the bench sets it for them; no FlapLab code reads it)",
  defaultText: "unset",
  readBy: "bench",
});

/** Every variable the bench sets or reads. */
export const SETTINGS = [BENCH_CHILD];
