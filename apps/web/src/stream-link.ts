import { type Connector, type StreamLink, whatwgWebSocketConnector } from "@flaplab/game-client";
import { pageWebTransportConnector } from "./webtransport.js";

/** How the page reaches the game's streams: WebTransport (the default) or plain WebSocket. */
export type { StreamLink };

export const STREAM_LINKS: readonly StreamLink[] = ["webtransport", "websocket"];

/**
 * `?link=webtransport|websocket` from a query string: undefined when absent; an unknown value is
 * an error the page shows (a run on the wrong link must not pass for a run on the right one).
 */
export function linkFromUrl(search: string): StreamLink | undefined {
  const raw = new URLSearchParams(search).get("link");
  if (raw === null) return undefined;
  if ((STREAM_LINKS as readonly string[]).includes(raw)) return raw as StreamLink;
  throw new Error(`unknown stream link "${raw}" in the page URL: use link=${STREAM_LINKS.join(" or link=")}`);
}

/** The browser's own transport of a link: its WebSocket, or the WebTransport polyfill. */
export function pageConnector(link: StreamLink, allowNative: boolean): Connector {
  return link === "websocket" ? whatwgWebSocketConnector((url) => new WebSocket(url)) : pageWebTransportConnector(allowNative);
}
