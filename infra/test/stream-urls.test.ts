// Every URL a browser is handed in each stage, against the load balancers that would carry it:
// the web config's Connect URLs, and the stream URLs StartGame (or a drain's Moved) gives out,
// computed by the server's own code (apps/server/src/stream-urls.ts) from the topology each
// service gets (FLAPLAB_TOPOLOGY_JSON). Each must be https/wss (the page is https), name a host
// on a load balancer's certificate, and reach the service running it, on the port that serves
// that link: the WebTransport link's WebSocket mapping (subprotocols webtransport_*) on the stream
// server (8443), the plain WebSocket link on the Connect host (8080, its upgrade handler).
import { parseTopology, type Topology } from "@flaplab/runtime";
import { beforeAll, describe, expect, it } from "vitest";
import { engineUrls, musicUrls } from "../../apps/server/src/stream-urls.js";
import { STAGES } from "../src/stages.js";
import { listenerAction } from "./listener.js";
import { type AwsListenerRule, albHosts, awsListenerRules, loadConfig, ofType, run } from "./sst-stand-ins.js";

/** The headers the WebTransport ponyfill's WebSocket mapping sends (lib/http2/browser/browser.js). */
const WEBTRANSPORT_WS_HEADERS = { "sec-websocket-protocol": "webtransport_kDraft1, webtransport_kDraft2" };

interface HandedUrl {
  readonly what: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  /** "forward <Service>:<port>/<protocol>". */
  readonly expected: string;
}

interface StageView {
  readonly rules: AwsListenerRule[];
  readonly hosts: Map<string, string[]>;
  readonly urls: HandedUrl[];
}
const stages = new Map<string, StageView>();

const pascal = (name: string) =>
  name
    .split("-")
    .map((p) => p[0]!.toUpperCase() + p.slice(1))
    .join("");

beforeAll(async () => {
  await loadConfig();
  for (const stage of STAGES) {
    await run(stage);
    const services = ofType("sst.aws.Service");
    const topologyOf = (name: string): Topology =>
      parseTopology(JSON.parse((services.find((s) => s.name === name)!.args["environment"] as Record<string, string>)["FLAPLAB_TOPOLOGY_JSON"]!));
    // StartGame's URLs come from the initiator's view of the topology.
    const initiatorGroup = services
      .map((s) => s.name)
      .find((name) => topologyOf(name).groups.some((g) => pascal(g.name) === name && g.components.includes("initiator")))!;
    const view = topologyOf(initiatorGroup);
    const urls: HandedUrl[] = [];
    for (const g of view.groups) {
      const service = pascal(g.name);
      if (g.components.includes("engine")) {
        const { engineUrl, engineWsUrl } = engineUrls(g);
        urls.push({ what: `${g.name} engineUrl`, url: engineUrl, headers: WEBTRANSPORT_WS_HEADERS, expected: `forward ${service}:8443/https` });
        urls.push({ what: `${g.name} engineWsUrl`, url: engineWsUrl, headers: {}, expected: `forward ${service}:8080/http` });
      }
      if (g.components.includes("music")) {
        const { musicUrl, musicWsUrl } = musicUrls(g);
        urls.push({ what: `${g.name} musicUrl`, url: musicUrl, headers: WEBTRANSPORT_WS_HEADERS, expected: `forward ${service}:8443/https` });
        urls.push({ what: `${g.name} musicWsUrl`, url: musicWsUrl, headers: {}, expected: `forward ${service}:8080/http` });
      }
    }
    // The page's Connect calls (its /config.json).
    const site = ofType("sst.aws.StaticSite")[0]!;
    const config = JSON.parse((site.args["environment"] as Record<string, string>)["FLAPLAB_WEB_CONFIG"]!) as Record<string, string>;
    const connect = { authUrl: "auth.v1.AuthService/Login", initiatorUrl: "initiator.v1.InitiatorService/StartGame", scoreUrl: "score.v1.ScoreService/GetScores" };
    for (const [key, method] of Object.entries(connect)) {
      const component = key.replace("Url", "");
      const group = view.groups.find((g) => g.components.includes(component as "auth"))!;
      urls.push({ what: key, url: `${config[key]!.replace(/\/$/, "")}/flaplab.${method}`, headers: {}, expected: `forward ${pascal(group.name)}:8080/http` });
    }
    stages.set(stage, { rules: awsListenerRules(), hosts: albHosts(), urls });
  }
});

describe("every URL a browser is handed reaches what serves it", () => {
  it.each(STAGES)("%s", (stage) => {
    const { rules, hosts, urls } = stages.get(stage)!;
    expect(urls.filter((u) => u.what.endsWith("WsUrl")).length).toBeGreaterThan(0);
    const failures: string[] = [];
    for (const u of urls) {
      const url = new URL(u.url);
      if (url.protocol !== "https:" && url.protocol !== "wss:") {
        failures.push(`${u.what} ${u.url}: ${url.protocol} from an https page (mixed content)`);
        continue;
      }
      if (url.port !== "") {
        failures.push(`${u.what} ${u.url}: port ${url.port}; the load balancers listen on 443`);
        continue;
      }
      const lb = [...hosts].find(([, names]) => names.includes(url.hostname))?.[0];
      if (!lb) {
        failures.push(`${u.what} ${u.url}: no load balancer has ${url.hostname} on its certificate and in DNS`);
        continue;
      }
      const action = listenerAction(
        rules.filter((r) => r.loadBalancer === lb),
        { host: url.hostname, path: url.pathname + url.search, headers: u.headers },
      );
      if (action !== u.expected) failures.push(`${u.what} ${u.url}: ${action}, not ${u.expected}`);
    }
    expect(failures).toEqual([]);
  });
});
