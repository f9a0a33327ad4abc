import { text } from "@flaplab/settings";

/** The Chromium that plays replays and the study (`--chromium`'s default). */
export const CHROMIUM = text({
  name: "FLAPLAB_CHROMIUM",
  format: "path",
  description: "Chromium binary for replays and the study (`--chromium`)",
  defaultText: "`/usr/bin/chromium`",
  readBy: "replay",
});

/** Every variable the replay runner and the study read. */
export const SETTINGS = [CHROMIUM];
