import { resolve } from "node:path";
import { loadRttTable } from "@flaplab/netem";
import type { RttTable } from "@flaplab/netem";
import { TOPOLOGIES_DIR } from "../src/whatif/cli.js";
import { loadStudy, type Study } from "../src/whatif/study.js";

/** Run-001 of each deployment of a real 5-run study, easy seed (and microservices' hard seed); tick frames cut from the latency logs. */
export const FIXTURE_STUDY = resolve(import.meta.dirname, "fixtures/whatif");

let cached: Promise<{ study: Study; table: RttTable }> | undefined;

export function fixtureStudy(): Promise<{ study: Study; table: RttTable }> {
  cached ??= (async () => ({ study: await loadStudy(FIXTURE_STUDY, TOPOLOGIES_DIR), table: await loadRttTable() }))();
  return cached;
}
