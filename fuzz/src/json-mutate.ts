// Structural mutation of JSON documents: a value somewhere in a valid document replaced by any
// JSON value, a key removed or added, an array grown, then the text itself byte-mutated.
import fc from "fast-check";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export interface JsonEdit {
  /** Random numbers that pick a node by walking down the document. */
  readonly path: readonly number[];
  readonly op: "replace" | "delete" | "add-key" | "grow";
  readonly value: Json;
  readonly key: string;
}

const edgeValues: fc.Arbitrary<Json> = fc.constantFrom<Json>(null, true, 0, -1, 1e308, -1e308, 2 ** 53 + 1, 0.5, "", "x".repeat(2000), [], {}, "NaN", "-0", "9223372036854775808");

export const jsonEdit: fc.Arbitrary<JsonEdit> = fc.record({
  path: fc.array(fc.nat(), { minLength: 0, maxLength: 6 }),
  op: fc.constantFrom<JsonEdit["op"]>("replace", "replace", "delete", "add-key", "grow"),
  value: fc.oneof(edgeValues, fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<Json>),
  key: fc.oneof(fc.constantFrom("__proto__", "constructor", "groups", "components", "address", "inputs", "t", "tick", "seed"), fc.string({ maxLength: 10 })),
});

function children(node: Json): [string | number, Json][] {
  if (Array.isArray(node)) return node.map((v, i) => [i, v]);
  if (node !== null && typeof node === "object") return Object.entries(node);
  return [];
}

/** `doc` with the edit applied (a deep copy). */
export function applyJsonEdit(doc: Json, edit: JsonEdit): Json {
  const root: Json = JSON.parse(JSON.stringify(doc)) as Json;
  let parent: Json | undefined;
  let at: string | number | undefined;
  let node = root;
  for (const r of edit.path) {
    const kids = children(node);
    if (kids.length === 0) break;
    const [k, v] = kids[r % kids.length]!;
    parent = node;
    at = k;
    node = v;
  }
  const set = (v: Json | undefined): Json => {
    if (parent === undefined || at === undefined) return v ?? null;
    if (Array.isArray(parent)) {
      if (v === undefined) parent.splice(at as number, 1);
      else parent[at as number] = v;
    } else if (parent !== null && typeof parent === "object") {
      if (v === undefined) delete parent[at as string];
      else Object.defineProperty(parent, at as string, { value: v, enumerable: true, writable: true, configurable: true });
    }
    return root;
  };
  switch (edit.op) {
    case "replace":
      return set(edit.value);
    case "delete":
      return set(undefined);
    case "add-key":
      if (node !== null && typeof node === "object" && !Array.isArray(node)) {
        Object.defineProperty(node, edit.key, { value: edit.value, enumerable: true, writable: true, configurable: true });
      }
      return root;
    case "grow":
      if (Array.isArray(node) && node.length > 0) {
        const copy = JSON.stringify(node[0]);
        for (let i = 0; i < 50; i++) node.push(JSON.parse(copy) as Json);
      }
      return root;
  }
}

export type { Json };
