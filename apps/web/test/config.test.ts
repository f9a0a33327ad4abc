import { describe, expect, it } from "vitest";
import { ConfigError, DEFAULT_CONFIG, loadConfig, parseConfig, parseConfigText } from "../src/config.js";
import { configJsonPlugin } from "../vite.config.js";

const good = {
  authUrl: "http://127.0.0.1:7071/",
  initiatorUrl: "http://127.0.0.1:7072",
  scoreUrl: "https://scores.example.test/base//",
  topology: "split",
};

describe("parseConfig", () => {
  it("accepts the four fields and strips trailing slashes", () => {
    expect(parseConfig(good)).toEqual({
      authUrl: "http://127.0.0.1:7071",
      initiatorUrl: "http://127.0.0.1:7072",
      scoreUrl: "https://scores.example.test/base",
      topology: "split",
      http3: false,
    });
    expect(parseConfig({ ...good, http3: true }).http3).toBe(true);
  });

  it("ignores fields it does not know", () => {
    expect(parseConfig({ ...good, region: "local" })).toEqual(parseConfig(good));
  });

  it.each([
    [null, "config must be a JSON object"],
    [[], "config must be a JSON object"],
    [{ ...good, authUrl: 7 }, "authUrl must be a non-empty string"],
    [{ ...good, scoreUrl: "not a url" }, 'scoreUrl is not a URL: "not a url"'],
    [{ ...good, initiatorUrl: "ftp://x/" }, "initiatorUrl must be an http(s) URL"],
    [{ ...good, topology: undefined }, "topology must be a string"],
    [{ ...good, http3: "yes" }, "http3 must be a boolean"],
  ])("rejects %j", (value, message) => {
    expect(() => parseConfig(value)).toThrow(ConfigError);
    expect(() => parseConfig(value)).toThrow(message);
  });

  it("reports bad JSON", () => {
    expect(() => parseConfigText("{")).toThrow(/config is not valid JSON/);
  });
});

describe("loadConfig", () => {
  it("fetches /config.json", async () => {
    const seen: string[] = [];
    const fakeFetch = (async (url: string) => {
      seen.push(url);
      return new Response(JSON.stringify(good), { status: 200 });
    }) as unknown as typeof fetch;
    await expect(loadConfig(fakeFetch)).resolves.toMatchObject({ topology: "split" });
    expect(seen).toEqual(["/config.json"]);
  });

  it("fails on an HTTP error", async () => {
    const fakeFetch = (async () => new Response("nope", { status: 404 })) as unknown as typeof fetch;
    await expect(loadConfig(fakeFetch)).rejects.toThrow("GET /config.json: HTTP 404");
  });
});

describe("the dev server's /config.json", () => {
  type Middleware = (req: { url?: string }, res: FakeResponse, next: () => void) => void;
  class FakeResponse {
    statusCode = 0;
    headers: Record<string, string> = {};
    body = "";
    setHeader(k: string, v: string) {
      this.headers[k.toLowerCase()] = v;
    }
    end(body: string) {
      this.body = body;
    }
  }
  const serve = (env: Record<string, string | undefined>, url: string) => {
    const plugin = configJsonPlugin(env as NodeJS.ProcessEnv);
    let middleware: Middleware | undefined;
    const fakeServer = { middlewares: { use: (m: Middleware) => (middleware = m) } };
    (plugin.configureServer as (s: unknown) => void)(fakeServer);
    const res = new FakeResponse();
    let passed = false;
    middleware!({ url }, res, () => (passed = true));
    return { res, passed };
  };

  it("serves FLAPLAB_WEB_CONFIG, validated", () => {
    const { res } = serve({ FLAPLAB_WEB_CONFIG: JSON.stringify(good) }, "/config.json?x=1");
    expect(res.statusCode).toBe(200);
    expect(res.headers["content-type"]).toBe("application/json");
    expect(res.headers["cross-origin-embedder-policy"]).toBe("require-corp");
    expect(parseConfigText(res.body)).toEqual(parseConfig(good));
  });

  it("defaults to the monolith on 127.0.0.1:7070", () => {
    const { res } = serve({}, "/config.json");
    expect(JSON.parse(res.body)).toEqual(DEFAULT_CONFIG);
    expect(DEFAULT_CONFIG.authUrl).toBe("http://127.0.0.1:7070");
  });

  it("passes other paths on", () => {
    expect(serve({}, "/index.html").passed).toBe(true);
  });

  it("refuses a broken FLAPLAB_WEB_CONFIG at startup", () => {
    expect(() => configJsonPlugin({ FLAPLAB_WEB_CONFIG: '{"authUrl":1}' } as NodeJS.ProcessEnv)).toThrow(ConfigError);
  });
});
