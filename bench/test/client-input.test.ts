import { create } from "@bufbuild/protobuf";
import { ClientInputSchema } from "@flaplab/contracts/engine/v1/stream_pb";
import { encodeDelimited } from "@flaplab/game-protocol";
import { describe, expect, it } from "vitest";
import { clientInput, sharedClientInput } from "../src/engine-harness.js";

describe("the in-memory client's inputs", () => {
  it("are byte for byte what encodeDelimited makes of ClientInput { seq }", () => {
    for (const seq of [0, 1, 127, 128, 300, 16_383, 16_384, 2 ** 21, 2 ** 31, 2 ** 32 - 1]) {
      expect([...clientInput(seq)], `seq ${seq}`).toEqual([...encodeDelimited(ClientInputSchema, create(ClientInputSchema, { seq, clientTimeMs: 0 }))]);
    }
  });

  it("are made once per seq when shared (up to 65,535), with the same bytes", () => {
    for (const seq of [1, 2, 300, 65_535]) {
      const shared = sharedClientInput(seq);
      expect([...shared], `seq ${seq}`).toEqual([...clientInput(seq)]);
      expect(sharedClientInput(seq), `seq ${seq}`).toBe(shared);
    }
    expect([...sharedClientInput(2 ** 21)]).toEqual([...clientInput(2 ** 21)]);
  });
});
