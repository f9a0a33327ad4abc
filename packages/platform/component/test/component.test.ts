import { Code, createHandlerContext } from "@connectrpc/connect";
import { AuthService } from "@flaplab/contracts/auth/v1/auth_pb";
import { describe, expect, it } from "vitest";
import { currentCall, defineComponent, isComponentName, principalKey, requirePrincipal, runInCall } from "../src/index.js";

describe("defineComponent", () => {
  it("keeps the public methods it is given", () => {
    const auth = defineComponent({ name: "auth", service: AuthService, publicMethods: ["Login", "Register"] });
    expect(auth.publicMethods).toEqual(["Login", "Register"]);
    expect(defineComponent({ name: "auth", service: AuthService }).publicMethods).toEqual([]);
  });

  it("rejects a public method the service does not have", () => {
    expect(() => defineComponent({ name: "auth", service: AuthService, publicMethods: ["Logout"] })).toThrow(
      /public method Logout is not a method of flaplab.auth.v1.AuthService/,
    );
  });

  it("knows the six component names", () => {
    expect(["auth", "worldgen", "engine", "initiator", "music", "score"].every(isComponentName)).toBe(true);
    expect(isComponentName("gateway")).toBe(false);
  });
});

describe("principal", () => {
  const ctx = () =>
    createHandlerContext({
      service: AuthService,
      method: AuthService.method.login,
      protocolName: "test",
      requestMethod: "POST",
      url: "test:/",
    });

  it("returns the principal the runtime set", () => {
    const c = ctx();
    const p = { username: "alice", token: "t", expiresAt: new Date(0) };
    c.values.set(principalKey, p);
    expect(requirePrincipal(c)).toBe(p);
  });

  it("fails Unauthenticated when none was set", () => {
    expect(() => requirePrincipal(ctx())).toThrow(expect.objectContaining({ code: Code.Unauthenticated }));
  });
});

describe("call context", () => {
  it("is visible across awaits inside runInCall and gone outside", async () => {
    expect(currentCall()).toBeUndefined();
    const seen = await runInCall({ component: "engine", verb: "Tick", gameId: "g" }, async () => {
      await new Promise((r) => setTimeout(r, 1));
      return currentCall();
    });
    expect(seen).toEqual({ component: "engine", verb: "Tick", gameId: "g" });
    expect(currentCall()).toBeUndefined();
  });

  it("nests: the inner call wins, the outer comes back", () => {
    runInCall({ component: "initiator", verb: "StartGame" }, () => {
      runInCall({ component: "engine", verb: "StartGame" }, () => expect(currentCall()?.component).toBe("engine"));
      expect(currentCall()?.component).toBe("initiator");
    });
  });
});
