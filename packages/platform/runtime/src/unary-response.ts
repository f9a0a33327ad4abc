import type { DescMessage, DescMethodUnary, DescService, MessageShape } from "@bufbuild/protobuf";
import type { UnaryResponse } from "@connectrpc/connect";

/** The answer of a unary call made by the runtime's own clients (connect-h1.ts, grpc-h2.ts). */
export class UnaryCallResponse<I extends DescMessage, O extends DescMessage> implements UnaryResponse<I, O> {
  readonly stream = false as const;
  readonly service: DescService;
  constructor(
    readonly method: DescMethodUnary<I, O>,
    readonly message: MessageShape<O>,
    readonly header: Headers,
    readonly trailer: Headers,
  ) {
    this.service = method.parent;
  }
}
