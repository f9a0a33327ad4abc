import { text } from "@flaplab/settings";

/** The toxiproxy binary latency emulation runs (read by `findToxiproxy`). */
export const TOXIPROXY = text({
  name: "FLAPLAB_TOXIPROXY",
  format: "path",
  description: "toxiproxy binary for latency emulation",
  defaultText: "`.tools/bin/toxiproxy-server`",
  readBy: "netem",
});

/** Every variable netem reads. */
export const SETTINGS = [TOXIPROXY];
