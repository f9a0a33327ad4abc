// The browser tests launch Chromium exactly as the replay runner does (flags, fresh profile).
export { launch as launchBrowser } from "@flaplab/replay/run";
