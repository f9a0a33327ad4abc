// What the link test needs from a Markdown file: its headings' anchors, as GitHub makes them, and
// its relative links. Fenced code blocks and inline code hold neither.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/** A link found in a Markdown file: where it is, and what it points at. */
export interface Link {
  readonly line: number;
  readonly target: string;
}

/** A link that does not resolve, and why. */
export interface BrokenLink extends Link {
  readonly reason: string;
}

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** Each line of `text` outside fenced code blocks, with its 1-based number. */
function proseLines(text: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let fence: string | undefined;
  text.split("\n").forEach((raw, i) => {
    const open = FENCE.exec(raw);
    if (fence !== undefined) {
      // A fence closes with at least as many of the same character, and nothing after it.
      if (open && open[1]![0] === fence[0] && open[1]!.length >= fence.length && raw.trim() === open[1]) {
        fence = undefined;
      }
      return;
    }
    if (open) {
      fence = open[1]!;
      return;
    }
    out.push({ line: i + 1, text: raw });
  });
  return out;
}

const CODE_SPAN = /(`+)([\s\S]*?[^`])\1(?!`)/g;

/** `text` with its inline code spans removed. */
const withoutCodeSpans = (text: string): string => text.replace(CODE_SPAN, "");

/** What rendering leaves of Markdown prose: link text without its target, no HTML tags, no emphasis marks. */
const renderProse = (prose: string): string =>
  prose
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/<\/?[A-Za-z][^>]*>/g, "")
    .replace(/(\*+)(\S(?:.*?\S)?)\1/g, "$2")
    .replace(/(^|[^\p{L}\p{N}])_(\S(?:.*?\S)?)_(?=[^\p{L}\p{N}]|$)/gu, "$1$2")
    .replace(/\\([!-/:-@[-`{-~])/g, "$1");

/** The text a heading shows: inline code as written, link and emphasis markup and HTML tags dropped. */
export function headingText(markdown: string): string {
  let out = "";
  let last = 0;
  for (const m of markdown.matchAll(CODE_SPAN)) {
    out += renderProse(markdown.slice(last, m.index!)) + m[2]!.trim();
    last = m.index! + m[0].length;
  }
  return (out + renderProse(markdown.slice(last))).trim();
}

/**
 * GitHub's anchor for a heading's text: lower case, every character that is not a letter, a mark, a
 * number, a connector (`_`), `-` or a space removed, then each space made a `-`.
 * "Limits, overload and CORS" → "limits-overload-and-cors".
 */
export function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of every heading in `text`, in order; a repeated slug gets `-1`, `-2`, … as on GitHub. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  const lines = proseLines(text);
  const add = (heading: string): void => {
    const base = slug(headingText(heading));
    let candidate = base;
    let n = seen.get(base) ?? 0;
    while (out.has(candidate)) candidate = `${base}-${++n}`;
    seen.set(base, n);
    out.add(candidate);
  };
  lines.forEach(({ text: line }, i) => {
    const atx = /^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/.exec(line);
    if (atx) {
      add(atx[1] ?? "");
      return;
    }
    // Setext: a paragraph line underlined with = or -.
    const prev = lines[i - 1];
    if (
      /^ {0,3}(=+|-+)[ \t]*$/.test(line) &&
      prev !== undefined &&
      prev.line === lines[i]!.line - 1 &&
      /^ {0,3}[^\s#>|*+\-=]/.test(prev.text) &&
      !/^ {0,3}\d+[.)]\s/.test(prev.text)
    ) {
      add(prev.text.trim());
    }
  });
  return out;
}

const INLINE_LINK =
  /!?\[((?:[^[\]\\]|\\.|\[(?:[^[\]\\]|\\.)*\])*)\]\(\s*(<[^<>\n]*>|(?:[^\s()\\]|\\.|\((?:[^\s()\\]|\\.)*\))*)(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g;
const DEFINITION = /^ {0,3}\[[^\]]+\]:\s*(<[^<>\n]*>|\S+)/;

/** Every inline link, image and link reference definition in `text`, outside code. */
export function links(text: string): Link[] {
  const out: Link[] = [];
  for (const { line, text: raw } of proseLines(text)) {
    const prose = withoutCodeSpans(raw);
    const definition = DEFINITION.exec(prose);
    if (definition) {
      out.push({ line, target: unbracket(definition[1]!) });
      continue;
    }
    for (const m of prose.matchAll(INLINE_LINK)) out.push({ line, target: unbracket(m[2]!) });
  }
  return out;
}

const unbracket = (target: string): string =>
  target.startsWith("<") && target.endsWith(">") ? target.slice(1, -1) : target;

/** A target with a scheme (`https:`, `mailto:` …) leaves the repository: not checked here. */
export const isExternal = (target: string): boolean => /^[A-Za-z][A-Za-z0-9+.-]*:/.test(target);

/**
 * Why the relative links of the Markdown file `file` do not resolve: a target file or folder that
 * does not exist (or lies outside `root`), or an anchor that names no heading of a Markdown target.
 * A target starting with `/` is relative to `root`, as on GitHub.
 */
export function brokenLinks(file: string, root: string): BrokenLink[] {
  const broken: BrokenLink[] = [];
  const cache = new Map<string, Set<string>>();
  const anchorsOf = (path: string): Set<string> => {
    let found = cache.get(path);
    if (!found) cache.set(path, (found = anchors(readFileSync(path, "utf8"))));
    return found;
  };
  for (const link of links(readFileSync(file, "utf8"))) {
    const { target } = link;
    if (isExternal(target)) continue;
    const hash = target.indexOf("#");
    const pathPart = hash === -1 ? target : target.slice(0, hash);
    const anchor = hash === -1 ? undefined : target.slice(hash + 1);
    let path: string;
    try {
      const decoded = decodeURIComponent(pathPart);
      path =
        decoded === "" ? file : decoded.startsWith("/") ? join(root, decoded) : resolve(dirname(file), decoded);
    } catch {
      broken.push({ ...link, reason: "the path is not valid percent-encoding" });
      continue;
    }
    const inside = relative(root, path);
    if (inside.startsWith(`..${sep}`) || inside === "..") {
      broken.push({ ...link, reason: "the target is outside the repository" });
      continue;
    }
    if (!existsSync(path)) {
      broken.push({ ...link, reason: `${inside} does not exist` });
      continue;
    }
    if (anchor === undefined) continue;
    // A folder's anchors are its README's, the page GitHub shows for it.
    const page = statSync(path).isDirectory() ? join(path, "README.md") : path;
    if (!page.endsWith(".md")) continue;
    if (!existsSync(page)) {
      broken.push({ ...link, reason: `${inside} has no README.md for the anchor #${anchor}` });
      continue;
    }
    let wanted: string;
    try {
      wanted = decodeURIComponent(anchor);
    } catch {
      broken.push({ ...link, reason: "the anchor is not valid percent-encoding" });
      continue;
    }
    if (!anchorsOf(page).has(wanted)) {
      broken.push({ ...link, reason: `${relative(root, page)} has no heading whose anchor is #${wanted}` });
    }
  }
  return broken;
}

/** Every `*.md` file under `dir`, sorted; `node_modules` and dot folders are skipped. */
export function markdownFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name.startsWith(".") || entry.name === "node_modules") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...markdownFiles(path));
    else if (entry.isFile() && entry.name.endsWith(".md")) out.push(path);
  }
  return out.sort();
}
