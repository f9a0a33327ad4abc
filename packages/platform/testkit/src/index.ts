export { describeContract, CONTRACT_MODES } from "./contract.js";
export type { ContractMode, ContractEnv, ContractContext, ContractSpec, ComponentUnderTest } from "./contract.js";
export { freePorts } from "@flaplab/ports";
export { memoryCallLog } from "./memory-log.js";
export { expectCode, rejection } from "./rejection.js";
export { openRawTls } from "./raw-tls.js";
export type { RawTlsConnection } from "./raw-tls.js";
