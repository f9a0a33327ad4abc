// Targets that need no server: the stream framing (size-delimited messages, frame decoding) and
// the files users hand in (traces read by the replay runner, topology files).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { create, toBinary, type DescMessage } from "@bufbuild/protobuf";
import { ClientInputSchema, FrameSchema, GameStreamMessageSchema, type Frame, type InputAck, InputAckSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { SoundClipSchema } from "@flaplab/contracts/music/v1/music_pb";
import { DelimitedDecoder, FrameDecodeError, FrameDecoder, StreamProtocolError } from "@flaplab/game-protocol";
import { loadTopology, TopologyError } from "@flaplab/runtime";
import { parseTrace, serializeTrace, TraceError } from "@flaplab/input-traces";
import fc from "fast-check";
import { loadTrace, ReplayUsageError } from "../../../replay/src/run/options.js";
import { applyJsonEdit, jsonEdit, type Json } from "../json-mutate.js";
import { messageOf } from "../messages.js";
import { applyMutation, concatBytes, hex, hugeVarint, leb128, lyingLength, mutations, randomBytes } from "../mutate.js";
import { accepted, clear, crash, type Target, type Verdict } from "../runner.js";

const REPO = resolve(import.meta.dirname, "../../..");

// ---- size-delimited stream messages -------------------------------------------------------------

const SCHEMAS: Record<string, DescMessage> = {
  ClientInput: ClientInputSchema,
  GameStreamMessage: GameStreamMessageSchema,
  SoundClip: SoundClipSchema,
};

function delimited(schema: DescMessage, msg: unknown): Uint8Array {
  const body = toBinary(schema, msg as never);
  return concatBytes(leb128(BigInt(body.length)), body);
}

interface DelimitedCase {
  readonly schema: string;
  readonly stream: Uint8Array;
  readonly cuts: readonly number[];
  readonly maxBytes: number | undefined;
}

const delimitedCase: fc.Arbitrary<DelimitedCase> = fc.constantFrom(...Object.keys(SCHEMAS)).chain((name) => {
  const schema = SCHEMAS[name]!;
  const valid = fc.array(messageOf(schema), { minLength: 1, maxLength: 5 }).map((ms) => concatBytes(...ms.map((m) => delimited(schema, m))));
  const stream = fc.oneof(
    { weight: 2, arbitrary: valid },
    { weight: 4, arbitrary: fc.tuple(valid, mutations).map(([s, ms]) => ms.reduce(applyMutation, s)) },
    { weight: 2, arbitrary: randomBytes(4096) },
    // a length prefix that lies, or a varint that never ends, in front of a body
    { weight: 2, arbitrary: fc.tuple(fc.oneof(lyingLength.map(leb128), hugeVarint), fc.uint8Array({ maxLength: 64 })).map(([p, b]) => concatBytes(p, b)) },
  );
  return fc.record({
    schema: fc.constant(name),
    stream,
    cuts: fc.array(fc.nat(), { maxLength: 6 }),
    maxBytes: fc.option(fc.constantFrom(0, 1, 16, 256, 65536), { freq: 3 }).map((v) => v ?? undefined),
  });
});

export const delimitedTarget: Target<DelimitedCase> = {
  name: "stream size-delimited decoder",
  remote: false,
  timeoutMs: 2_000,
  arbitrary: delimitedCase,
  async run(c) {
    const decoder = new DelimitedDecoder(SCHEMAS[c.schema]!, c.maxBytes);
    const cuts = [...new Set(c.cuts.map((x) => (c.stream.length === 0 ? 0 : x % c.stream.length)))].sort((a, b) => a - b);
    let from = 0;
    let messages = 0;
    try {
      for (const to of [...cuts, c.stream.length]) {
        messages += decoder.push(c.stream.slice(from, to)).length;
        from = to;
      }
    } catch (err) {
      if (err instanceof StreamProtocolError && err.message !== "") return clear(`StreamProtocolError ${err.kind}`);
      throw err;
    }
    return accepted(decoder.pending > 0 ? "incomplete message pending" : `${messages > 0 ? "messages" : "nothing"} decoded`);
  },
  show: (c) => `schema=${c.schema} maxBytes=${c.maxBytes ?? "default"} cuts=${c.cuts.join(",")} bytes=${hex(c.stream)}`,
};

/** Valid streams come back message for message, however they are cut (checked by the test too). */
export function roundTrip(schema: DescMessage, msgs: unknown[], cuts: number[]): number {
  const stream = concatBytes(...msgs.map((m) => delimited(schema, m)));
  const decoder = new DelimitedDecoder(schema);
  let n = 0;
  let from = 0;
  for (const to of [...cuts.filter((c) => c < stream.length).sort((a, b) => a - b), stream.length]) {
    n += decoder.push(stream.slice(from, to)).length;
    from = to;
  }
  return n;
}

// ---- frame decoding ------------------------------------------------------------------------------

/** A plausible game's frames (full first, consecutive ticks) that cases then damage. */
const plausibleFrames: fc.Arbitrary<Frame[]> = fc
  .tuple(fc.integer({ min: 1, max: 30 }), fc.array(messageOf(FrameSchema), { minLength: 1, maxLength: 30 }))
  .map(([n, random]) => {
    const frames: Frame[] = [];
    for (let i = 0; i < n; i++) {
      const full = i === 0;
      frames.push(
        create(FrameSchema, {
          tick: i + 1,
          birdY: 200 + i,
          full,
          ...(full ? { score: 0, reflectedSeq: 1, pipeSpeed: 2, pipeWindowX: 0, pipeSpacing: 150, pipeWidth: 52, pipes: [0, 1, 2].map((index) => ({ index, gapStart: 100, gapHeight: 120 })) } : {}),
        }),
      );
    }
    // splice in some random frames
    for (const [k, r] of random.entries()) if (k % 3 === 0) frames.splice(k % (frames.length + 1), 0, r);
    return frames;
  });

/** What the engine sends a client between its summary's predecessors: tick frames and input acks. */
type StreamItem = Frame | InputAck;
const isAck = (item: StreamItem): item is InputAck => item.$typeName === InputAckSchema.typeName;

/** A plausible game with input acks spliced in (at the tick of the frame before them, or anywhere), and random acks. */
const plausibleItems: fc.Arbitrary<StreamItem[]> = fc
  .tuple(plausibleFrames, fc.array(fc.nat(60), { maxLength: 6 }), fc.array(messageOf(InputAckSchema), { maxLength: 3 }))
  .map(([frames, ackAt, randomAcks]) => {
    const items: StreamItem[] = [...frames];
    for (const [n, k] of ackAt.entries()) {
      const at = k % (items.length + 1);
      const before = items[at - 1];
      items.splice(at, 0, create(InputAckSchema, { tick: before?.tick ?? 1, seq: n + 2, birdY: 200, birdVelocity: -4.6 }));
    }
    for (const [n, r] of randomAcks.entries()) items.splice((n * 7) % (items.length + 1), 0, r);
    return items;
  });

interface FrameCase {
  readonly items: StreamItem[];
}

const frameCase: fc.Arbitrary<FrameCase> = fc.record({
  items: fc.oneof(
    { weight: 3, arbitrary: plausibleItems },
    { weight: 1, arbitrary: fc.array(fc.oneof(messageOf(FrameSchema), messageOf(InputAckSchema)), { maxLength: 20 }) },
  ),
});

export const frameTarget: Target<FrameCase> = {
  name: "stream frame decoder",
  remote: false,
  timeoutMs: 2_000,
  arbitrary: frameCase,
  async run(c) {
    const decoder = new FrameDecoder();
    let applied = 0;
    let acks = 0;
    try {
      for (const item of c.items) {
        const view = isAck(item) ? decoder.applyAck(item) : decoder.apply(item);
        if (isAck(item)) acks++;
        if (!Number.isInteger(view.tick)) return crash(`a view with tick ${view.tick}`);
        applied++;
      }
    } catch (err) {
      if (err instanceof FrameDecodeError && err.message !== "") return clear("FrameDecodeError");
      throw err;
    }
    return accepted(applied === 0 ? "no frames" : acks > 0 ? "frames and acks applied" : "frames applied");
  },
  show: (c) => c.items.map((i) => (isAck(i) ? `ack:${hex(toBinary(InputAckSchema, i), 64)}` : hex(toBinary(FrameSchema, i), 128))).join(" "),
};

// ---- trace files (the replay runner's reader) ----------------------------------------------------

const easyCsv = readFileSync(join(REPO, "replay/traces/6977347407732442987.csv"), "utf8");
const hardJson = readFileSync(join(REPO, "replay/traces/8525333463046388971.json"), "utf8");
const easyAsJson = serializeTrace(parseTrace(easyCsv, { fileName: "6977347407732442987.csv" }), "flaplab-json");

interface FileCase {
  readonly name: string;
  readonly text: string;
}

const csvText: fc.Arbitrary<string> = fc
  .record({
    fudge: fc.option(fc.oneof(fc.constantFrom("0.011", "-1", "NaN", "1e999", ""), fc.string({ maxLength: 6 }))),
    rows: fc.array(fc.tuple(fc.oneof(fc.constant("57"), fc.string({ maxLength: 3 })), fc.oneof(fc.nat().map(String), fc.constantFrom("1e30", "-5", "9007199254740993", "0x10", " 12", "1.5"))), { maxLength: 40 }),
    eol: fc.constantFrom("\n", "\r\n", "\r"),
    bom: fc.boolean(),
  })
  .map(({ fudge, rows, eol, bom }) => `${bom ? "\uFEFF" : ""}code,time${fudge !== null ? `,${fudge}` : ""}${eol}${rows.map(([k, t]) => `${k},${t}`).join(eol)}`);

function textMutated(base: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.tuple(base, mutations).map(([t, ms]) => Buffer.from(ms.reduce(applyMutation, new TextEncoder().encode(t))).toString("utf8"));
}

function jsonMutated(doc: Json): fc.Arbitrary<string> {
  return fc.array(jsonEdit, { minLength: 1, maxLength: 3 }).map((edits) => JSON.stringify(edits.reduce(applyJsonEdit, doc)));
}

const traceNames = fc.oneof(
  fc.constantFrom("6977347407732442987.csv", "8525333463046388971.json", "trace.csv", "trace.json", "-9223372036854775808.csv", "9223372036854775808.csv", "00.csv", "1.CSV"),
  fc.stringMatching(/^[a-z0-9-][a-z0-9.-]{0,11}$/),
);

const traceCase: fc.Arbitrary<FileCase> = fc.record({
  name: traceNames,
  text: fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(easyCsv, hardJson, easyAsJson) },
    { weight: 3, arbitrary: csvText },
    { weight: 3, arbitrary: textMutated(fc.constantFrom(easyCsv, hardJson, easyAsJson)) },
    { weight: 4, arbitrary: jsonMutated(JSON.parse(hardJson) as Json).map(String) },
    { weight: 2, arbitrary: jsonMutated(JSON.parse(easyAsJson) as Json).map(String) },
    { weight: 2, arbitrary: fc.oneof(fc.string({ maxLength: 200 }), fc.string({ unit: "binary", maxLength: 200 }), fc.json()) },
  ),
});

function fileTarget(name: string, arbitrary: fc.Arbitrary<FileCase>, load: (path: string) => Promise<Verdict>): Target<FileCase> {
  let dir: string | undefined;
  return {
    name,
    remote: false,
    timeoutMs: 5_000,
    arbitrary,
    async run(c) {
      dir ??= mkdtempSync(join(tmpdir(), "flaplab-fuzz-files-"));
      const file = join(dir, c.name.replace(/[/\\]/g, "_"));
      writeFileSync(file, c.text);
      try {
        return await load(file);
      } finally {
        rmSync(file, { force: true });
      }
    },
    show: (c) => `file ${JSON.stringify(c.name)}: ${JSON.stringify(c.text.slice(0, 400))}${c.text.length > 400 ? `…(${c.text.length} chars)` : ""}`,
  };
}

export const traceTarget = fileTarget("trace files (replay reader)", traceCase, async (file) => {
  try {
    const t = await loadTrace(file);
    if (t.trace.flapOffsetsMs.some((x) => !Number.isFinite(x))) return crash("a trace with an offset that is not finite");
    return accepted(t.trace.format);
  } catch (err) {
    if ((err instanceof ReplayUsageError || err instanceof TraceError) && err.message !== "") return clear(err.name);
    throw err;
  }
});

// ---- topology files ------------------------------------------------------------------------------

const topologies = ["monolith", "microservices", "multiaz", "multiregion"].map(
  (n) => JSON.parse(readFileSync(join(REPO, "topologies", `${n}.json`), "utf8")) as Json,
);

const topologyCase: fc.Arbitrary<FileCase> = fc.record({
  name: fc.constantFrom("topology.json", "t.json"),
  text: fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom(...topologies.map((t) => JSON.stringify(t))) },
    { weight: 6, arbitrary: fc.constantFrom(...topologies).chain(jsonMutated) },
    { weight: 2, arbitrary: textMutated(fc.constantFrom(...topologies.map((t) => JSON.stringify(t, null, 2)))) },
    { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 100 }), fc.json()) },
  ),
});

export const topologyTarget = fileTarget("topology files", topologyCase, async (file) => {
  try {
    const t = await loadTopology(file);
    return accepted(`${t.groups.length} groups`);
  } catch (err) {
    if (err instanceof TopologyError && err.message !== "") return clear("TopologyError");
    throw err;
  }
});
