/**
 * The conformance runner's framing on stdin and stdout: each message is prefixed with its length
 * as a 32-bit big-endian integer (not protobuf's varint size-delimiting).
 */

/** `message` with its 4-byte big-endian length in front. */
export function frame(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + message.byteLength);
  new DataView(out.buffer).setUint32(0, message.byteLength);
  out.set(message, 4);
  return out;
}

/** The messages of a length-prefixed byte stream, in order; throws when the stream ends inside one. */
export async function* unframe(stream: AsyncIterable<Uint8Array>): AsyncGenerator<Uint8Array> {
  let pending: Uint8Array = new Uint8Array(0);
  for await (const chunk of stream) {
    pending = pending.byteLength === 0 ? chunk : concat(pending, chunk);
    while (pending.byteLength >= 4) {
      const size = new DataView(pending.buffer, pending.byteOffset, 4).getUint32(0);
      if (pending.byteLength < 4 + size) break;
      yield pending.subarray(4, 4 + size);
      pending = pending.subarray(4 + size);
    }
  }
  if (pending.byteLength > 0) throw new Error(`input ended inside a message (${pending.byteLength} bytes left over)`);
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}
