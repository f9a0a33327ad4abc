import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { codeName } from "../src/guard.js";

describe("codeName", () => {
  it("names every Connect code in snake case", () => {
    expect(codeName(new ConnectError("x", Code.Unauthenticated))).toBe("unauthenticated");
    expect(codeName(new ConnectError("x", Code.PermissionDenied))).toBe("permission_denied");
    expect(codeName(new ConnectError("x", Code.DeadlineExceeded))).toBe("deadline_exceeded");
    expect(codeName(new ConnectError("x", Code.ResourceExhausted))).toBe("resource_exhausted");
    expect(codeName(new ConnectError("x", Code.DataLoss))).toBe("data_loss");
  });

  it("names a plain error as unknown", () => {
    expect(codeName(new Error("boom"))).toBe("unknown");
  });
});
