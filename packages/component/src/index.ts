export { defineComponent, COMPONENT_NAMES, isComponentName } from "./definition.js";
export type { ComponentDefinition, ComponentName } from "./definition.js";
export { principalKey, requirePrincipal } from "./principal.js";
export type { Principal } from "./principal.js";
export { currentCall, runInCall } from "./call-context.js";
export type { CallContext } from "./call-context.js";
export { clientAddressKey, clientAddressOf } from "./client-address.js";
export { CallSignal, deadlineExceeded } from "./call-signal.js";
export { UnaryHandlerContext } from "./unary-handler-context.js";
