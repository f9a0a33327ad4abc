import { text, type WholeNumberSetting, wholeNumber } from "@flaplab/settings";
import type { HostLimits } from "./config.js";

const readBy = "host";

/** The RPC port's limits, one variable each (read by `hostLimitsFromEnv`). */
export const HOST_LIMIT_SETTINGS: { readonly [K in keyof HostLimits]: WholeNumberSetting } = {
  firstByteTimeoutMs: wholeNumber({
    name: "FLAPLAB_FIRST_BYTE_TIMEOUT_MS",
    description: "close a connection that sends nothing (or no complete HTTP/1.1 headers) for this long, ms",
    default: 10_000,
    min: 1,
    readBy,
  }),
  idleTimeoutMs: wholeNumber({
    name: "FLAPLAB_IDLE_TIMEOUT_MS",
    description:
      "close a keep-alive connection / h2c session with no call in progress for this long, ms; in the cloud keep it above the load balancer's idle timeout (the cloud stages set 630000 against their ALBs' 600 s; [`infra/README.md`](../infra/README.md))",
    default: 120_000,
    min: 1,
    readBy,
  }),
  maxConnections: wholeNumber({ name: "FLAPLAB_MAX_CONNECTIONS", description: "open connections on the RPC port", default: 4096, min: 1, readBy }),
  maxConcurrentCalls: wholeNumber({ name: "FLAPLAB_MAX_CONCURRENT_CALLS", description: "calls handled at once", default: 64, min: 1, readBy }),
  maxQueuedCalls: wholeNumber({
    name: "FLAPLAB_MAX_QUEUED_CALLS",
    description: "calls waiting for a slot; more are shed with `resource_exhausted`",
    default: 128,
    min: 0,
    readBy,
  }),
  maxQueueWaitMs: wholeNumber({ name: "FLAPLAB_MAX_QUEUE_WAIT_MS", description: "a call waiting longer is shed, ms", default: 2000, min: 1, readBy }),
  maxStreamsPerSession: wholeNumber({
    name: "FLAPLAB_H2_MAX_STREAMS",
    description: "concurrent streams per h2c session (advertised to clients)",
    default: 512,
    min: 1,
    readBy,
  }),
  maxSessionMemoryMiB: wholeNumber({ name: "FLAPLAB_H2_MAX_SESSION_MEMORY_MIB", description: "Node's http2 memory per session, MiB", default: 32, min: 1, readBy }),
  bodyTimeoutMs: wholeNumber({
    name: "FLAPLAB_BODY_TIMEOUT_MS",
    description:
      "a call's body must be complete this long after its headers, ms; until then it holds no call slot or queue place, after it is cut (h2c stream reset, HTTP/1.1 connection closed)",
    default: 5000,
    min: 1,
    readBy,
  }),
  maxCallsPerConnection: wholeNumber({
    name: "FLAPLAB_MAX_CALLS_PER_CONNECTION",
    description: "calls of one connection (h2c session or HTTP/1.1 socket) being received, queued or handled; more are shed with `resource_exhausted`",
    default: 128,
    min: 1,
    readBy,
  }),
  maxCallsPerAddress: wholeNumber({
    name: "FLAPLAB_MAX_CALLS_PER_ADDRESS",
    description: "the same for one client address; behind a proxy or load balancer all clients share its address, so raise it there",
    default: 160,
    min: 1,
    readBy,
  }),
};

/** The browser origins allowed on the RPC port (read by `corsOriginsFromEnv`). */
export const CORS_ORIGINS = text({
  name: "FLAPLAB_CORS_ORIGINS",
  format: "comma-separated origins",
  description:
    "origins allowed to call from a browser, e.g. `https://play.example.com`; by default `http://127.0.0.1:5173`, `http://localhost:5173` and the topology's web address (`web.publicUrl`), so `pnpm dev` works as is. Any other origin gets no `access-control-allow-origin`",
  defaultText: "local web client and the topology's web address",
  readBy,
});

/** Every variable the host reads. */
export const SETTINGS = [...Object.values(HOST_LIMIT_SETTINGS), CORS_ORIGINS];
