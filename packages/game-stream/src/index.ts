export { CloseCode } from "./close-codes.js";
export type { SessionEnd, SessionHandler, StreamSession } from "./session.js";
export { DelimitedDecoder, encodeDelimited, StreamProtocolError, DEFAULT_MAX_MESSAGE_BYTES } from "./delimited.js";
export { ClientInputReader } from "./input-reader.js";
export { FrameEncoder, FrameDecoder, FrameDecodeError, FrameWriter } from "./frames.js";
export type { AckSource, FrameCourse, FrameSource, ClientView, ClientPipe } from "./frames.js";
export { checkStreamOwnership } from "./ownership.js";
export type { StreamRefusal } from "./ownership.js";
