import { join } from "node:path";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, type Client, type ServiceImpl } from "@connectrpc/connect";
import { defineComponent, requirePrincipal } from "@flaplab/component";
import { ScoreService } from "@flaplab/contracts/score/v1/score_pb";
import { describeContract } from "@flaplab/testkit";
import { afterAll, expect, it } from "vitest";
import { authComponent, createAuth, INVALID_CREDENTIALS, openUserStore, type UserStore } from "../src/index.js";
import { FAST_SCRYPT } from "./helpers.js";

// A stand-in protected component: it answers with the caller the runtime verified, which shows
// that tokens issued by auth pass the runtime's token check in every mode.
const whoami = defineComponent({ name: "score", service: ScoreService });
const whoamiImpl: ServiceImpl<typeof ScoreService> = {
  recordRun(req, ctx) {
    return { run: { gameId: req.gameId, username: requirePrincipal(ctx).username } };
  },
  getScores() {
    return {};
  },
};

const stores: UserStore[] = [];
const protectedClients = new Map<string, Client<typeof ScoreService>>();

describeContract(
  {
    // Auth calls nobody; here it is given a client of the stand-in, to probe with the tokens it issues.
    component: { ...authComponent, calls: ["score"] },
    create: (env) => {
      const store = openUserStore(join(env.dataDir, "auth"));
      stores.push(store);
      protectedClients.set(env.mode, env.client(whoami));
      return createAuth({ store, signer: env.signer, scrypt: FAST_SCRYPT });
    },
    peers: [{ component: whoami, create: () => whoamiImpl }],
  },
  (t) => {
    afterAll(() => {
      for (const s of stores.splice(0)) s.close();
    });

    const whoAmI = async (token: string) => {
      const client = protectedClients.get(t.mode)!;
      const res = await client.recordRun({ gameId: "probe" }, { headers: { authorization: `Bearer ${token}` } });
      return res.run?.username;
    };

    it("registers a player and returns a session with a working token", async () => {
      const res = await t.clientAs(undefined).register({ username: "alice", password: "wonderland" });
      expect(res.session?.username).toBe("alice");
      const expiresAt = timestampDate(res.session!.expiresAt!);
      expect(expiresAt.getTime()).toBeGreaterThan(Date.now());
      expect(await whoAmI(res.session!.token)).toBe("alice");
    });

    it("logs in with the right password", async () => {
      const res = await t.clientAs(undefined).login({ username: "alice", password: "wonderland" });
      expect(res.session?.username).toBe("alice");
      expect(await whoAmI(res.session!.token)).toBe("alice");
    });

    it("rejects a wrong password and an unknown user alike", async () => {
      await expect(t.clientAs(undefined).login({ username: "alice", password: "wrong-password" })).rejects.toMatchObject({
        code: Code.Unauthenticated,
        rawMessage: INVALID_CREDENTIALS,
      });
      await expect(t.clientAs(undefined).login({ username: "nobody", password: "wonderland" })).rejects.toMatchObject({
        code: Code.Unauthenticated,
        rawMessage: INVALID_CREDENTIALS,
      });
    });

    it("refuses to register a taken name", async () => {
      await expect(t.clientAs(undefined).register({ username: "alice", password: "another-one" })).rejects.toMatchObject({
        code: Code.AlreadyExists,
      });
    });

    it("rejects bad input as InvalidArgument", async () => {
      const anon = t.clientAs(undefined);
      await expect(anon.register({ username: "x", password: "long-enough" })).rejects.toMatchObject({
        code: Code.InvalidArgument,
        rawMessage: expect.stringMatching(/username must be 3 to 32/) as unknown,
      });
      await expect(anon.register({ username: "bob", password: "short" })).rejects.toMatchObject({
        code: Code.InvalidArgument,
        rawMessage: expect.stringMatching(/password must be 8 to 256/) as unknown,
      });
      await expect(anon.login({ username: "", password: "" })).rejects.toMatchObject({ code: Code.InvalidArgument });
    });

    it("needs no token, and ignores a bad one, on its public methods", async () => {
      const res = await t.clientAs("not-a-token").register({ username: "bob", password: "bobs-password" });
      expect(res.session?.username).toBe("bob");
      expect(await whoAmI(res.session!.token)).toBe("bob");
    });

    it("issues tokens a tampered copy of which is refused", async () => {
      const { session } = await t.clientAs(undefined).login({ username: "bob", password: "bobs-password" });
      const [h, p, s] = session!.token.split(".");
      const claims = JSON.parse(Buffer.from(p!, "base64url").toString()) as Record<string, unknown>;
      const forged = `${h}.${Buffer.from(JSON.stringify({ ...claims, username: "alice", sub: "alice" })).toString("base64url")}.${s}`;
      await expect(whoAmI(forged)).rejects.toMatchObject({ code: Code.Unauthenticated });
    });
  },
);
