/**
 * Environment-variable settings, declared once and read through the declaration. A package lists
 * the variables it reads in its `src/settings.ts` (name, value type, default, what it does, which
 * process reads it); its code reads them with the accessors below, and docs/settings.md is written
 * from the same lists (`pnpm docs:settings`).
 */

/** Where settings are read from: `process.env`, or a test's own object. */
export type Env = Readonly<Record<string, string | undefined>>;

/** What every declaration says; the Markdown fields go into docs/settings.md as they are. */
interface Declared {
  /** The variable. One `<NAME>` in it stands for a part the reader fills in (`nameFor`). */
  readonly name: string;
  /** What it does, one line of Markdown. */
  readonly description: string;
  /** Which process (or component, or script) reads it, Markdown. */
  readonly readBy: string;
  /** The default as the documentation states it, Markdown. */
  readonly defaultText: string;
}

/** A whole number with a lower bound; unset or blank: `default`. */
export interface WholeNumberSetting extends Declared {
  readonly kind: "whole number";
  readonly default: number;
  readonly min: number;
}

/** One of a few words; unset or blank: `default`. */
export interface ChoiceSetting<C extends string = string> extends Declared {
  readonly kind: "choice";
  readonly choices: readonly C[];
  readonly default: C;
}

/** Free text in a stated `format` (a URL, PEM, a path, JSON, …), checked by the code that uses it. */
export interface TextSetting extends Declared {
  readonly kind: "text";
  /** What the value looks like, Markdown (the docs' value column). */
  readonly format: string;
}

export type Setting = WholeNumberSetting | ChoiceSetting | TextSetting;

type Spec<S extends Declared> = Omit<S, "kind" | "defaultText"> & { readonly defaultText?: string };

/** Declares a whole-number setting; the docs show `default` unless `defaultText` says otherwise. */
export function wholeNumber(spec: Spec<WholeNumberSetting>): WholeNumberSetting {
  return Object.freeze({ kind: "whole number", ...spec, defaultText: spec.defaultText ?? String(spec.default) });
}

/** Declares a setting that is one of `choices`; the docs show `` `default` `` unless `defaultText` says otherwise. */
export function choice<const C extends string>(spec: Spec<ChoiceSetting<C>>): ChoiceSetting<C> {
  return Object.freeze({ kind: "choice", ...spec, defaultText: spec.defaultText ?? `\`${spec.default}\`` });
}

/** Declares a text setting; `defaultText` says what happens when it is unset. */
export function text(spec: Omit<TextSetting, "kind">): TextSetting {
  return Object.freeze({ kind: "text", ...spec });
}

/** What a value of `setting` looks like, Markdown (the docs' value column). */
export function valueText(setting: Setting): string {
  switch (setting.kind) {
    case "whole number":
      return `whole number ≥ ${setting.min}`;
    case "choice":
      return setting.choices.map((c) => `\`${c}\``).join(" or ");
    case "text":
      return setting.format;
  }
}

/** A bad value, naming the variable (when the reader gives no error of its own). */
export class SettingError extends Error {
  override readonly name = "SettingError";
}

/** Makes the error a bad value throws; a package passes its own config error class. */
export type Fail = (message: string) => Error;

const settingError: Fail = (message) => new SettingError(message);

/** The variable's name with its `<NAME>` part filled in (upper case): `FLAPLAB_COMPONENT_KEY_<NAME>`, "engine" → `FLAPLAB_COMPONENT_KEY_ENGINE`. */
export function nameFor(setting: Setting, part: string): string {
  if (!setting.name.includes("<NAME>")) throw new Error(`${setting.name} has no <NAME> part`);
  return setting.name.replace("<NAME>", part.toUpperCase());
}

/** Whether `variable` is `setting`'s (its `<NAME>` part standing for any upper-case word). */
export function isNameOf(setting: Setting, variable: string): boolean {
  if (!setting.name.includes("<NAME>")) return variable === setting.name;
  const [head, tail] = setting.name.split("<NAME>") as [string, string];
  return new RegExp(`^${head}[A-Z0-9_]+${tail}$`).test(variable);
}

/**
 * The value of a whole-number setting, or undefined when it is unset or blank (surrounding spaces
 * ignored). Throws `fail(message)` naming the variable for anything but a whole number ≥ `min`.
 */
export function readWholeNumber(env: Env, setting: WholeNumberSetting, fail: Fail = settingError): number | undefined {
  const raw = env[setting.name]?.trim();
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < setting.min) {
    throw fail(`${setting.name} must be a whole number ≥ ${setting.min}, got "${raw}"`);
  }
  return value;
}

/** The value of a whole-number setting, or its default when unset or blank; throws like `readWholeNumber`. */
export function wholeNumberOf(env: Env, setting: WholeNumberSetting, fail: Fail = settingError): number {
  return readWholeNumber(env, setting, fail) ?? setting.default;
}

/** The whole-number settings of `settings` that are set in `env`, by key; unset ones are left out. */
export function readWholeNumbers<K extends string>(
  env: Env,
  settings: Readonly<Record<K, WholeNumberSetting>>,
  fail: Fail = settingError,
): Partial<Record<K, number>> {
  const out: Partial<Record<K, number>> = {};
  for (const key of Object.keys(settings) as K[]) {
    const value = readWholeNumber(env, settings[key], fail);
    if (value !== undefined) out[key] = value;
  }
  return out;
}

/** The value of a choice setting (surrounding spaces ignored), or its default when unset or blank; throws `fail` naming the variable for any other word. */
export function choiceOf<C extends string>(env: Env, setting: ChoiceSetting<C>, fail: Fail = settingError): C {
  const raw = env[setting.name]?.trim() || setting.default;
  const found = setting.choices.find((c) => c === raw);
  if (found === undefined) {
    throw fail(`${setting.name} must be ${setting.choices.map((c) => `"${c}"`).join(" or ")}, got "${raw}"`);
  }
  return found;
}

/** The value of a text setting exactly as set (undefined when unset); its user checks it. */
export function readText(env: Env, setting: TextSetting, part?: string): string | undefined {
  return env[part === undefined ? setting.name : nameFor(setting, part)];
}

/** Each whole-number setting's default, by key. */
export function defaultsOf<K extends string>(settings: Readonly<Record<K, WholeNumberSetting>>): Record<K, number> {
  return mapValues(settings, (s) => s.default);
}

/** Each whole-number setting's minimum, by key. */
export function minimumsOf<K extends string>(settings: Readonly<Record<K, WholeNumberSetting>>): Record<K, number> {
  return mapValues(settings, (s) => s.min);
}

/** Each setting's variable, by key. */
export function namesOf<K extends string>(settings: Readonly<Record<K, Setting>>): Record<K, string> {
  return mapValues(settings, (s) => s.name);
}

function mapValues<K extends string, S, T>(record: Readonly<Record<K, S>>, f: (value: S) => T): Record<K, T> {
  return Object.fromEntries((Object.keys(record) as K[]).map((key) => [key, f(record[key])])) as Record<K, T>;
}
