import { resolve } from "node:path";

export const REPO = resolve(import.meta.dirname, "../../..");

export { topologyOnFreePorts } from "../../src/study/deployment.js";
