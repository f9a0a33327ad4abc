import type { DescMessage, DescMethodUnary, MessageShape } from "@bufbuild/protobuf";
import type { UnaryResponse } from "@connectrpc/connect";

/** One unary call of the runtime's own clients (connect-h1.ts, grpc-h2.ts), with the call's deadline in ms (none: no deadline). */
export type LeanCall = <I extends DescMessage, O extends DescMessage>(
  method: DescMethodUnary<I, O>,
  message: MessageShape<I>,
  headers: Headers,
  signal: AbortSignal | undefined,
  timeoutMs: number | undefined,
) => Promise<UnaryResponse<I, O>>;
