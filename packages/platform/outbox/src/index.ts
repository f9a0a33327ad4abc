export { type Delivery, DurableOutbox, type FlushResult, type OutboxLogger, type OutboxOptions } from "./outbox.js";
