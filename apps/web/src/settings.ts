import type { TextSetting } from "@flaplab/settings";

// Declared as a plain object (only a type from @flaplab/settings): vite.config.ts imports this
// file, and Vite loads its config's package imports untranspiled.

/** The page's `/config.json` (read by the Vite server in `vite.config.ts`; `scripts/serve.ts --config-json` sets it). */
export const WEB_CONFIG = {
  kind: "text",
  name: "FLAPLAB_WEB_CONFIG",
  format: "JSON",
  description: "the web page's `/config.json` (service and stream addresses) as JSON text",
  defaultText: "the monolith on 127.0.0.1:7070",
  readBy: "web (Vite server, `apps/web/scripts/serve.ts`)",
} as const satisfies TextSetting;

/** Every variable the web client's server reads. */
export const SETTINGS: readonly TextSetting[] = [WEB_CONFIG];
