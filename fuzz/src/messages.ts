// Random valid protobuf messages of any schema, from protobuf-es reflection: edge values of every
// scalar type, unknown enum values, nested messages and lists.
import { create, ScalarType, type DescField, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import fc from "fast-check";

/** A string a case's message may carry in a game id field, replaced by a real game id when sent. */
export const GAME_PLACEHOLDER = "@game";

const strings = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 24 }) },
  { weight: 2, arbitrary: fc.constantFrom("", GAME_PLACEHOLDER, GAME_PLACEHOLDER, "keeper", "fuzzer", "keeper-run-0", "admin", "../../etc/passwd", "' OR 1=1 --", "\u0000", "🐦".repeat(40)) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 64 }) },
  { weight: 1, arbitrary: fc.integer({ min: 100, max: 5000 }).map((n) => "x".repeat(n)) },
);

const int32 = fc.oneof(fc.integer(), fc.constantFrom(0, -1, 1, 2 ** 31 - 1, -(2 ** 31), 100, 480, 640));
const uint32 = fc.oneof(fc.nat({ max: 0xffffffff }), fc.constantFrom(0, 1, 0xffffffff, 100, 1000));
const int64 = fc.oneof(fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }), fc.constantFrom(0n, -1n, 2n ** 63n - 1n, -(2n ** 63n), 6977347407732442987n));
const uint64 = fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.constantFrom(0n, 2n ** 64n - 1n));
const double = fc.oneof(fc.double(), fc.constantFrom(0, -0, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.MAX_VALUE, Number.MIN_VALUE, 1e300, 200, 150));
const float = fc.oneof(fc.float(), fc.constantFrom(0, Number.NaN, Number.POSITIVE_INFINITY, 3.4028234663852886e38));

function scalar(t: ScalarType): fc.Arbitrary<unknown> {
  switch (t) {
    case ScalarType.STRING:
      return strings;
    case ScalarType.BOOL:
      return fc.boolean();
    case ScalarType.BYTES:
      return fc.uint8Array({ maxLength: 64 });
    case ScalarType.DOUBLE:
      return double;
    case ScalarType.FLOAT:
      return float;
    case ScalarType.INT32:
    case ScalarType.SINT32:
    case ScalarType.SFIXED32:
      return int32;
    case ScalarType.UINT32:
    case ScalarType.FIXED32:
      return uint32;
    case ScalarType.INT64:
    case ScalarType.SINT64:
    case ScalarType.SFIXED64:
      return int64;
    case ScalarType.UINT64:
    case ScalarType.FIXED64:
      return uint64;
  }
}

function enumValue(field: { enum: { values: readonly { number: number }[] } }): fc.Arbitrary<number> {
  return fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...field.enum.values.map((v) => v.number)) }, { weight: 1, arbitrary: int32 });
}

function fieldValue(field: DescField, depth: number): fc.Arbitrary<unknown> {
  switch (field.fieldKind) {
    case "scalar":
      return scalar(field.scalar);
    case "enum":
      return enumValue(field);
    case "message":
      return messageInit(field.message, depth + 1);
    case "list": {
      const item: fc.Arbitrary<unknown> =
        field.listKind === "scalar" ? scalar(field.scalar) : field.listKind === "enum" ? enumValue(field) : messageInit(field.message, depth + 1);
      return fc.oneof({ weight: 4, arbitrary: fc.array(item, { maxLength: 8 }) }, { weight: 1, arbitrary: fc.array(item, { minLength: 90, maxLength: 140 }) });
    }
    case "map":
      return fc.constant({});
  }
}

function messageInit(schema: DescMessage, depth: number): fc.Arbitrary<Record<string, unknown>> {
  if (depth > 3) return fc.constant({});
  const parts: Record<string, fc.Arbitrary<unknown>> = {};
  for (const member of schema.members) {
    if (member.kind === "oneof") {
      parts[member.localName] = fc.oneof(...member.fields.map((f) => fieldValue(f, depth).map((value) => ({ case: f.localName, value }))));
    } else {
      parts[member.localName] = fieldValue(member, depth);
    }
  }
  // Every field may be left out (its default), as a real client would.
  return fc.record(parts, { requiredKeys: [] });
}

/** A random valid message of `schema`. */
export function messageOf<D extends DescMessage>(schema: D): fc.Arbitrary<MessageShape<D>> {
  return messageInit(schema, 0).map((init) => create(schema, init as never));
}
