import { existsSync, readFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { anchors, brokenLinks, headingText, isExternal, links, markdownFiles, slug } from "./markdown.js";

const DOCS = resolve(import.meta.dirname, "..");
const ROOT = resolve(DOCS, "..");
const README = join(ROOT, "README.md");
const MAX_README_LINES = 200;

/** Where the packages' and tools' own READMEs live (results folders hold generated reports, checked by their writers). */
const README_DIRS = ["packages", "apps", "replay", "bench", "infra", "fuzz", "proto", "patches", "topologies"];

/** Every README.md under the workspace folders, results folders left out. */
function packageReadmes(): string[] {
  return README_DIRS.map((dir) => join(ROOT, dir))
    .filter((dir) => existsSync(dir))
    .flatMap((dir) => markdownFiles(dir))
    .filter((path) => path.endsWith("README.md") && !relative(ROOT, path).split("/").includes("results"));
}

/** The pages checked: the top-level README, every page under docs/, every package's README, and the Markdown files the README links to. */
function pages(): string[] {
  const linkedFromReadme = links(readFileSync(README, "utf8"))
    .map(({ target }) => target.split("#")[0]!)
    .filter((path) => path.endsWith(".md") && !isExternal(path))
    .map((path) => resolve(ROOT, decodeURIComponent(path)))
    // A missing one is reported as the README's broken link.
    .filter((path) => existsSync(path));
  return [...new Set([README, ...markdownFiles(DOCS), ...packageReadmes(), ...linkedFromReadme])];
}

describe("every relative link resolves", () => {
  it.each(pages().map((page) => [relative(ROOT, page), page]))("%s", (_, page) => {
    const broken = brokenLinks(page, ROOT).map(({ line, target, reason }) => `line ${line}: (${target}) ${reason}`);
    expect(broken).toEqual([]);
  });
});

describe("the top-level README", () => {
  it(`has at most ${MAX_README_LINES} lines`, () => {
    const lines = readFileSync(README, "utf8").split("\n").length - 1;
    expect(lines).toBeLessThanOrEqual(MAX_README_LINES);
  });

  it("links to every page under docs/", () => {
    const linked = new Set(
      links(readFileSync(README, "utf8"))
        .filter(({ target }) => !isExternal(target))
        .map(({ target }) => resolve(ROOT, decodeURIComponent(target.split("#")[0]!))),
    );
    const missing = markdownFiles(DOCS)
      .filter((page) => !linked.has(page) && page !== join(DOCS, "README.md"))
      .map((page) => relative(ROOT, page));
    expect(missing).toEqual([]);
  });
});

describe("GitHub's heading anchors", () => {
  it.each([
    ["Limits, overload and CORS", "limits-overload-and-cors"],
    ["Quick start (a fresh machine with Node 20 and npm)", "quick-start-a-fresh-machine-with-node-20-and-npm"],
    ["1b. Idle hop (`idle`): a call at a game's pace against a Go reference", "1b-idle-hop-idle-a-call-at-a-games-pace-against-a-go-reference"],
    ["Faults: `--fault <kind>@<tick>`", "faults---fault-kindtick"],
    ["Traces (`FLAPLAB_TRACING=xray`)", "traces-flaplab_tracingxray"],
    ["`summary.json` (format `flaplab-run/1`)", "summaryjson-format-flaplab-run1"],
    ["The precise tick clock (`FLAPLAB_ENGINE_CLOCK=precise`)", "the-precise-tick-clock-flaplab_engine_clockprecise"],
    ["Calls at a game's pace (section 1's paced rows, and the study)", "calls-at-a-games-pace-section-1s-paced-rows-and-the-study"],
    ["**Bold** and [a link](https://example.org) and <em>tags</em>", "bold-and-a-link-and-tags"],
    ["Goals — met or not: 2× × 3 µs", "goals--met-or-not-2--3-µs"],
  ])("%s → #%s", (heading, anchor) => {
    expect(slug(headingText(heading))).toBe(anchor);
  });

  it("numbers repeated headings, skips code blocks and reads setext headings", () => {
    const text = [
      "# Tests",
      "## Tests",
      "```sh",
      "# not a heading",
      "```",
      "### Tests ###",
      "Setext title",
      "------------",
      "#hashtag is a paragraph",
    ].join("\n");
    expect([...anchors(text)]).toEqual(["tests", "tests-1", "tests-2", "setext-title"]);
  });

  it("finds links outside code only", () => {
    const text = [
      "See [a](a.md#x), ![b](img/b.png \"title\") and [`c`, \"C\"](<c d.md>).",
      "Not `[e](e.md)` and",
      "```md",
      "[f](f.md)",
      "```",
      "[ref]: g/",
      "[h](https://example.org) [i](mailto:someone@example.org)",
    ].join("\n");
    expect(links(text).map(({ line, target }) => `${line} ${target}`)).toEqual([
      "1 a.md#x",
      "1 img/b.png",
      "1 c d.md",
      "6 g/",
      "7 https://example.org",
      "7 mailto:someone@example.org",
    ]);
    expect(links(text).filter(({ target }) => !isExternal(target)).length).toBe(4);
  });
});
