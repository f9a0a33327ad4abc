import type { ComponentName } from "@flaplab/component";
import { publicHost, type StageNames } from "./naming.js";
import type { ServicePlan, WebPlan } from "./types.js";

// The web client's site and its /config.json.

/** The web site, with the default provider in the home region, and the URLs the browser calls. */
export function planWeb(services: readonly ServicePlan[], topology: string, homeRegion: string, names: StageNames): WebPlan {
  const urlOf = (c: ComponentName): string => services.find((s) => s.components.includes(c))!.publicUrl!;
  const host = publicHost(names, "web");
  return {
    name: "Web",
    host,
    url: `https://${host}`,
    region: homeRegion,
    config: {
      authUrl: urlOf("auth"),
      initiatorUrl: urlOf("initiator"),
      scoreUrl: urlOf("score"),
      topology,
      // No native HTTP/3 in the cloud: the load balancers carry the WebSocket links only.
      http3: false,
    },
  };
}
