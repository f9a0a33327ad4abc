import { fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";

/** Default largest message accepted on a stream. */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024;

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

/** `message` as size-delimited protobuf: its length as an unsigned LEB128 varint, then the bytes. */
export function encodeDelimited<D extends DescMessage>(schema: D, message: MessageShape<D>): Uint8Array {
  const body = toBinary(schema, message);
  const out = new Uint8Array(varintLength(body.length) + body.length);
  let n = body.length;
  let i = 0;
  while (n > 0x7f) {
    out[i++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  out[i++] = n;
  out.set(body, i);
  return out;
}

function varintLength(n: number): number {
  let len = 1;
  while (n > 0x7f) {
    n >>>= 7;
    len++;
  }
  return len;
}

/**
 * Splits a byte stream into size-delimited messages, however the transport chunked it. Throws
 * StreamProtocolError for a length over `maxBytes`, a broken varint, or a message that does not decode.
 */
export class DelimitedDecoder<D extends DescMessage> {
  private buffer: Uint8Array = new Uint8Array(0);

  constructor(
    private readonly schema: D,
    private readonly maxBytes = DEFAULT_MAX_MESSAGE_BYTES,
  ) {}

  /** Messages completed by `chunk`, in order. */
  push(chunk: Uint8Array): MessageShape<D>[] {
    this.buffer = this.buffer.length === 0 ? chunk : concat(this.buffer, chunk);
    const out: MessageShape<D>[] = [];
    let offset = 0;
    for (;;) {
      const header = readVarint(this.buffer, offset);
      if (header === undefined) break;
      const [length, bodyStart] = header;
      if (length > this.maxBytes) {
        throw new StreamProtocolError(`message of ${length} bytes is over the limit of ${this.maxBytes}`, "too-large");
      }
      if (this.buffer.length - bodyStart < length) break;
      const body = this.buffer.subarray(bodyStart, bodyStart + length);
      try {
        out.push(fromBinary(this.schema, body));
      } catch (err) {
        throw new StreamProtocolError(`cannot decode ${this.schema.typeName}: ${(err as Error).message}`, "malformed");
      }
      offset = bodyStart + length;
    }
    // Keep only a private copy of what is left: the transport may reuse the chunk it handed in.
    if (offset > 0) this.buffer = this.buffer.slice(offset);
    else if (this.buffer === chunk && chunk.length > 0) this.buffer = chunk.slice();
    return out;
  }

  /** Bytes of an incomplete message waiting for more input. */
  get pending(): number {
    return this.buffer.length;
  }
}

/** [value, offset after it], or undefined when the varint is not complete yet. */
function readVarint(buf: Uint8Array, offset: number): [number, number] | undefined {
  let value = 0;
  for (let i = 0; i < 5; i++) {
    if (offset + i >= buf.length) return undefined;
    const byte = buf[offset + i]!;
    value += (byte & 0x7f) * 2 ** (7 * i);
    if ((byte & 0x80) === 0) return [value, offset + i + 1];
  }
  throw new StreamProtocolError("message length is not a valid varint", "malformed");
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
