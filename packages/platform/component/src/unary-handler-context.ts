import { CallSignal } from "./call-signal.js";

/**
 * What the runtime's direct calls and the host's networked calls share of Connect's unary
 * `HandlerContext` beyond the signal: the method, and response headers and trailers that exist
 * only once a handler touches them (a `Headers` costs ≈ 0.8 µs to build, and most calls set none).
 */
export abstract class UnaryHandlerContext extends CallSignal {
  readonly requestMethod = "POST";
  /** Response headers a handler set; undefined when it set none. */
  protected response: Headers | undefined;
  /** Response trailers a handler set; undefined when it set none. */
  protected trailer: Headers | undefined;

  get responseHeader(): Headers {
    return (this.response ??= new Headers());
  }

  get responseTrailer(): Headers {
    return (this.trailer ??= new Headers());
  }
}
