import type { DescService } from "@bufbuild/protobuf";

/** The six components of FlapLab, by the names topology files use. */
export const COMPONENT_NAMES = ["auth", "worldgen", "engine", "initiator", "music", "score"] as const;
export type ComponentName = (typeof COMPONENT_NAMES)[number];

export function isComponentName(value: unknown): value is ComponentName {
  return typeof value === "string" && (COMPONENT_NAMES as readonly string[]).includes(value);
}

/**
 * A component: a proto service plus what the runtime must know to mount it.
 * The handler itself comes from the component package's `createXxx(deps)` factory.
 */
export interface ComponentDefinition<S extends DescService = DescService> {
  readonly name: ComponentName;
  readonly service: S;
  /** Methods (by proto name, e.g. "Login") callable without a token. Every other method needs one. */
  readonly publicMethods: readonly string[];
  /**
   * Methods only components may call (e.g. "RecordRun"): they need a component credential, and a
   * player's token is refused with PermissionDenied. The rest are for players: they accept a
   * player's token and refuse a component credential (no component calls them).
   */
  readonly internalMethods: readonly string[];
  /**
   * The call graph's edges into this component: for an internal method, the components that may
   * call it (e.g. RecordRun: the engine). A component credential of any other component is refused
   * with PermissionDenied. An internal method not listed here takes any component.
   */
  readonly callers: Readonly<Record<string, readonly ComponentName[]>>;
  /**
   * The components this one calls, when declared (`[]`: none). A component that calls nobody is
   * served without a call context (nothing it does would read one), which in a process of such
   * components keeps AsyncLocalStorage's promise hooks off; the runtime refuses it a client.
   * Undeclared: it may call any component.
   */
  readonly calls: readonly ComponentName[] | undefined;
}

export function defineComponent<S extends DescService>(def: {
  name: ComponentName;
  service: S;
  publicMethods?: readonly string[];
  internalMethods?: readonly string[];
  callers?: Readonly<Record<string, readonly ComponentName[]>>;
  calls?: readonly ComponentName[];
}): ComponentDefinition<S> {
  const publicMethods = def.publicMethods ?? [];
  const internalMethods = def.internalMethods ?? [];
  for (const [kind, methods] of [["public", publicMethods], ["internal", internalMethods]] as const) {
    for (const m of methods) {
      if (!def.service.methods.some((d) => d.name === m)) {
        throw new Error(`component ${def.name}: ${kind} method ${m} is not a method of ${def.service.typeName}`);
      }
    }
  }
  const both = publicMethods.find((m) => internalMethods.includes(m));
  if (both !== undefined) throw new Error(`component ${def.name}: method ${both} cannot be both public and internal`);
  const callers = def.callers ?? {};
  for (const m of Object.keys(callers)) {
    if (!internalMethods.includes(m)) throw new Error(`component ${def.name}: callers of ${m} are given, but ${m} is not internal`);
  }
  for (const c of def.calls ?? []) {
    if (!isComponentName(c)) throw new Error(`component ${def.name}: calls ${String(c)}, which is not a component`);
  }
  return { name: def.name, service: def.service, publicMethods, internalMethods, callers, calls: def.calls };
}
