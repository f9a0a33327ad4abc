import type { CallLog, CallRecord } from "@flaplab/runtime";

/** A call log kept in memory, for assertions. */
export function memoryCallLog(): { log: CallLog; records: CallRecord[] } {
  const records: CallRecord[] = [];
  return { log: (r) => records.push(r), records };
}
