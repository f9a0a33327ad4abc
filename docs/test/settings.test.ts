import { isNameOf } from "@flaplab/settings";
import { describe, expect, it } from "vitest";
import { variablesIn, variablesInCode } from "../src/env-reads.js";
import { ALL_SETTINGS, expectedSettingsDoc } from "../src/settings-doc.js";

/** Whether a name the code uses (or a prefix it completes) is declared. */
function declared(name: string): boolean {
  if (name.endsWith("_")) return ALL_SETTINGS.some((s) => s.name.startsWith(name));
  return ALL_SETTINGS.some((s) => isNameOf(s, name));
}

describe("docs/settings.md", () => {
  it("holds the tables the settings declarations make", async () => {
    const { current, expected } = await expectedSettingsDoc();
    expect(current, "docs/settings.md is out of date: run pnpm docs:settings").toBe(expected);
  });

  it("declares each variable once", () => {
    const names = ALL_SETTINGS.map((s) => s.name);
    expect(names.filter((name, i) => names.indexOf(name) !== i)).toEqual([]);
  });
});

describe("the code's FLAPLAB_* variables", () => {
  it("are all declared in a package's src/settings.ts", () => {
    const found = variablesInCode();
    // The scan must see the code at all: these are read in three different ways.
    for (const name of ["FLAPLAB_ENGINE_CLOCK", "FLAPLAB_DOMAIN", "FLAPLAB_CALL_LOG_STDOUT"]) {
      expect(found.map((v) => v.name)).toContain(name);
    }
    const undeclared = found.filter((v) => !declared(v.name)).map((v) => `${v.file}:${v.line} ${v.name}`);
    expect(undeclared, "declare these in the src/settings.ts of the package that reads them, then run pnpm docs:settings").toEqual([]);
  });

  it("are found however the code names them, and not in comments", () => {
    const code = [
      'const a = process.env["FLAPLAB_A"];',
      "const b = process.env.FLAPLAB_B ?? 1;",
      `const c = \`FLAPLAB_C_\${part}\`;`,
      'const env = { FLAPLAB_D: "1", other: 2 };',
      "  FLAPLAB_E: \"2\",",
      "// process.env[\"FLAPLAB_COMMENTED\"]",
      "import { FLAPLAB_TRACE_FORMAT } from \"@flaplab/input-traces\";",
      "const f = g(); // FLAPLAB_TRAILING is only mentioned",
    ].join("\n");
    expect(variablesIn("x.ts", code).map((v) => v.name)).toEqual(["FLAPLAB_A", "FLAPLAB_B", "FLAPLAB_C_", "FLAPLAB_D", "FLAPLAB_E"]);
    const shell = ['# FLAPLAB_COMMENTED', `if [ -n "\${FLAPLAB_F:-}" ]; then`, '  export FLAPLAB_G=/tmp/x', 'echo "$FLAPLAB_H"'].join("\n");
    expect(variablesIn("start.sh", shell).map((v) => v.name)).toEqual(["FLAPLAB_F", "FLAPLAB_G", "FLAPLAB_H"]);
  });
});
