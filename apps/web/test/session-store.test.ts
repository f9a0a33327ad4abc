import { describe, expect, it } from "vitest";
import { EXPIRY_MARGIN_MS, jwtExpiryMs, SessionStore } from "../src/session-store.js";

function memoryStorage() {
  const map = new Map<string, string>();
  return {
    map,
    getItem: (k: string) => map.get(k) ?? null,
    setItem: (k: string, v: string) => void map.set(k, v),
    removeItem: (k: string) => void map.delete(k),
  };
}

describe("SessionStore", () => {
  it("returns the stored session until it is about to expire, then forgets it", () => {
    let now = 1_000_000;
    const storage = memoryStorage();
    const store = new SessionStore(storage, () => now);
    store.set({ username: "alice", token: "t", expiresAtMs: now + 60_000 });
    expect(store.get()).toEqual({ username: "alice", token: "t", expiresAtMs: 1_060_000 });
    now = 1_060_000 - EXPIRY_MARGIN_MS;
    expect(store.get()).toBeUndefined();
    expect(storage.map.size).toBe(0);
  });

  it("drops garbage", () => {
    const storage = memoryStorage();
    storage.setItem("flaplab.session", "{not json");
    expect(new SessionStore(storage).get()).toBeUndefined();
    storage.setItem("flaplab.session", JSON.stringify({ username: "a" }));
    expect(new SessionStore(storage).get()).toBeUndefined();
  });
});

describe("jwtExpiryMs", () => {
  it("reads exp from the payload", () => {
    const payload = btoa(JSON.stringify({ sub: "alice", exp: 1_800_000_000 })).replace(/=+$/, "");
    expect(jwtExpiryMs(`e30.${payload}.sig`)).toBe(1_800_000_000_000);
    expect(jwtExpiryMs("nope")).toBeUndefined();
  });
});
