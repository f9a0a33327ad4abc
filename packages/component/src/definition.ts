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
}

export function defineComponent<S extends DescService>(def: {
  name: ComponentName;
  service: S;
  publicMethods?: readonly string[];
}): ComponentDefinition<S> {
  for (const m of def.publicMethods ?? []) {
    if (!def.service.methods.some((d) => d.name === m)) {
      throw new Error(`component ${def.name}: public method ${m} is not a method of ${def.service.typeName}`);
    }
  }
  return { name: def.name, service: def.service, publicMethods: def.publicMethods ?? [] };
}
