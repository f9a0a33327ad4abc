import { fromBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { sizeDelimitedEncode, sizeDelimitedPeek } from "@bufbuild/protobuf/wire";

/** Default largest message accepted on a stream. */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024;

const EMPTY = new Uint8Array(0);

/** A length prefix longer than this is refused: 5 bytes hold every uint32 length. */
const MAX_PREFIX_BYTES = 5;

export class StreamProtocolError extends Error {
  override readonly name = "StreamProtocolError";
  constructor(
    message: string,
    /** "malformed" or "too-large". */
    readonly kind: "malformed" | "too-large",
  ) {
    super(message);
  }
}

/**
 * `message` as size-delimited protobuf: its length as an unsigned LEB128 varint, then the bytes
 * (`sizeDelimitedEncode` of `@bufbuild/protobuf/wire`). Not for the engine's per-tick frames:
 * those go through `FrameWriter`, which allocates nothing.
 */
export function encodeDelimited<D extends DescMessage>(schema: D, message: MessageShape<D>): Uint8Array {
  return sizeDelimitedEncode(schema, message);
}

/**
 * Splits a byte stream into size-delimited messages, however the transport chunked it. Throws
 * StreamProtocolError for a length over `maxBytes`, a broken varint, or a message that does not decode.
 *
 * The length prefix is read with the library's `sizeDelimitedPeek`. Its `sizeDelimitedDecodeStream`
 * is not used: it consumes the whole AsyncIterable (a caller here pushes chunks and answers each
 * message before reading on), and its errors are plain Errors that cannot tell a message over the
 * limit from a malformed one, which the streams answer with different close codes.
 */
export class DelimitedDecoder<D extends DescMessage> {
  private buffer: Uint8Array = EMPTY;

  constructor(
    private readonly schema: D,
    private readonly maxBytes = DEFAULT_MAX_MESSAGE_BYTES,
  ) {}

  /** Messages completed by `chunk`, in order. */
  push(chunk: Uint8Array): MessageShape<D>[] {
    const out: MessageShape<D>[] = [];
    this.read(chunk, (message) => {
      out.push(message);
    });
    return out;
  }

  /** As `push`, with the bytes each message took on the stream (its length prefix included). */
  pushSized(chunk: Uint8Array): { message: MessageShape<D>; bytes: number }[] {
    const out: { message: MessageShape<D>; bytes: number }[] = [];
    this.read(chunk, (message, bytes) => {
      out.push({ message, bytes });
    });
    return out;
  }

  /**
   * As `pushSized`, without an array: `emit` gets each message and the bytes it took, in order.
   * For a per-chunk path that should allocate no more than the messages themselves.
   */
  each(chunk: Uint8Array, emit: (message: MessageShape<D>, bytes: number) => void): void {
    this.read(chunk, emit);
  }

  private read(chunk: Uint8Array, emit: (message: MessageShape<D>, bytes: number) => void): void {
    this.buffer = this.buffer.length === 0 ? chunk : concat(this.buffer, chunk);
    let offset = 0;
    for (;;) {
      const header = readPrefix(this.buffer, offset);
      if (header === undefined) break;
      const [length, bodyStart] = header;
      if (length > this.maxBytes) {
        throw new StreamProtocolError(`message of ${length} bytes is over the limit of ${this.maxBytes}`, "too-large");
      }
      if (this.buffer.length - bodyStart < length) break;
      const body = this.buffer.subarray(bodyStart, bodyStart + length);
      let message: MessageShape<D>;
      try {
        message = fromBinary(this.schema, body);
      } catch (err) {
        throw new StreamProtocolError(`cannot decode ${this.schema.typeName}: ${(err as Error).message}`, "malformed");
      }
      emit(message, bodyStart + length - offset);
      offset = bodyStart + length;
    }
    // Keep only a private copy of what is left: the transport may reuse the chunk it handed in.
    if (offset === this.buffer.length) this.buffer = EMPTY;
    else if (offset > 0) this.buffer = this.buffer.slice(offset);
    else if (this.buffer === chunk && chunk.length > 0) this.buffer = chunk.slice();
  }

  /** Bytes of an incomplete message waiting for more input. */
  get pending(): number {
    return this.buffer.length;
  }
}

/** [length, offset of the body], or undefined when the prefix is not complete yet. */
function readPrefix(buf: Uint8Array, offset: number): [number, number] | undefined {
  // A prefix whose first five bytes all continue is not a uint32 length, complete or not.
  let i = offset;
  while (i < buf.length && i - offset < MAX_PREFIX_BYTES && (buf[i]! & 0x80) !== 0) i++;
  if (i - offset >= MAX_PREFIX_BYTES) throw new StreamProtocolError("message length is not a valid varint", "malformed");
  if (i >= buf.length) return undefined;
  // The fifth byte holds bits 28–31 only; more would be dropped by a uint32 read.
  if (i - offset === MAX_PREFIX_BYTES - 1 && buf[i]! > 0x0f) {
    throw new StreamProtocolError("message length is not a valid varint: over 32 bits", "malformed");
  }
  const peek = sizeDelimitedPeek(buf.subarray(offset, i + 1));
  if (peek.eof) return undefined;
  return [peek.size, offset + peek.offset];
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
