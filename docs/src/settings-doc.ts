// The tables of docs/settings.md, written from the settings each package declares in its
// src/settings.ts. `pnpm docs:settings` writes them; test/settings.test.ts checks they are current.
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { SETTINGS as AUTH } from "@flaplab/auth/settings";
import { SETTINGS as BENCH } from "@flaplab/bench/settings";
import { SETTINGS as ENGINE } from "@flaplab/engine/settings";
import { SETTINGS as ENGINE_SHARDS } from "@flaplab/engine-shards/settings";
import { SETTINGS as HOST } from "@flaplab/host/settings";
import { SETTINGS as IDENTITY } from "@flaplab/identity/settings";
import { SETTINGS as INFRA } from "@flaplab/infra/settings";
import { SETTINGS as NETEM } from "@flaplab/netem/settings";
import { renderTable } from "@flaplab/report-kit";
import { SETTINGS as REPLAY } from "@flaplab/replay/settings";
import { SETTINGS as SERVER } from "@flaplab/server/settings";
import { type Setting, valueText } from "@flaplab/settings";
import { SETTINGS as SNAPSHOTS } from "@flaplab/snapshots/settings";
import { SETTINGS as STREAMS } from "@flaplab/stream-servers/settings";
import { SETTINGS as TRACING } from "@flaplab/telemetry/settings";
import { SETTINGS as WEB } from "@flaplab/web/settings";

/** One table of the page: a heading and the settings under it, in the order they are declared. */
export interface Section {
  readonly title: string;
  readonly settings: readonly Setting[];
}

/** The page's tables, in the page's order. */
export const SECTIONS: readonly Section[] = [
  { title: "Server, `pnpm dev` and the container", settings: SERVER },
  { title: "Keys", settings: IDENTITY },
  { title: "RPC port", settings: HOST },
  { title: "Stream port", settings: STREAMS },
  { title: "Logins and registrations", settings: AUTH },
  { title: "Engine", settings: [...ENGINE, ...ENGINE_SHARDS] },
  { title: "Game snapshots", settings: SNAPSHOTS },
  { title: "Web client, replays, latency emulation, bench", settings: [...WEB, ...REPLAY, ...NETEM, ...BENCH] },
  { title: "Cloud", settings: INFRA },
  { title: "Tracing (OpenTelemetry)", settings: TRACING },
];

/** Every declared setting. */
export const ALL_SETTINGS: readonly Setting[] = SECTIONS.flatMap((s) => s.settings);

export const SETTINGS_DOC = resolve(import.meta.dirname, "../settings.md");
export const BEGIN = "<!-- settings:begin — written by `pnpm docs:settings` from each package's src/settings.ts; edit those, not this -->";
export const END = "<!-- settings:end -->";

/** The Markdown between the markers: a heading and a table per section. */
export function renderSections(sections: readonly Section[] = SECTIONS): string {
  return sections
    .map((section) =>
      [
        `## ${section.title}`,
        "",
        renderTable({
          headers: ["variable", "what", "value", "default", "read by"],
          rows: section.settings.map((s) => [`\`${s.name}\``, s.description, valueText(s), s.defaultText, s.readBy]),
          align: ["l", "l", "l", "l", "l"],
          compact: true,
        }),
      ].join("\n"),
    )
    .join("\n\n");
}

/** `doc` with the text between its markers replaced by `generated`; throws when the markers are missing. */
export function withGenerated(doc: string, generated: string): string {
  const begin = doc.indexOf(BEGIN);
  const end = doc.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`docs/settings.md needs the lines\n${BEGIN}\n${END}\naround its tables`);
  return `${doc.slice(0, begin + BEGIN.length)}\n\n${generated}\n\n${doc.slice(end)}`;
}

/** docs/settings.md as the generator writes it, from the file as it is now. */
export async function expectedSettingsDoc(): Promise<{ current: string; expected: string }> {
  const current = await readFile(SETTINGS_DOC, "utf8");
  return { current, expected: withGenerated(current, renderSections()) };
}
