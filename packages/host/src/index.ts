export { createHost } from "./host.js";
export type { Host, HostOptions } from "./host.js";
