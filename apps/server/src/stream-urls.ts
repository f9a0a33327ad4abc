// The stream URLs StartGame (and a drain's Moved) hands to browsers, from a group of the topology.
import type { GroupSpec } from "@flaplab/runtime";

export const ENGINE_STREAM_PATH = "/engine/v1/game";
export const MUSIC_STREAM_PATH = "/music/v1/music";

/**
 * Where clients open an engine group's game streams: the WebTransport link at the group's stream
 * server (`streamPublicUrl`), the plain WebSocket link at its Connect host (`publicUrl`).
 */
export function engineUrls(group: Pick<GroupSpec, "publicUrl" | "streamPublicUrl">): { engineUrl: string; engineWsUrl: string } {
  return { engineUrl: group.streamPublicUrl + ENGINE_STREAM_PATH, engineWsUrl: webSocketUrl(group.publicUrl) + ENGINE_STREAM_PATH };
}

/** Where clients open the music stream of a game, on both links. */
export function musicUrls(group: Pick<GroupSpec, "publicUrl" | "streamPublicUrl">): { musicUrl: string; musicWsUrl: string } {
  return { musicUrl: group.streamPublicUrl + MUSIC_STREAM_PATH, musicWsUrl: webSocketUrl(group.publicUrl) + MUSIC_STREAM_PATH };
}

/** The WebSocket URL of a group's RPC base URL: http → ws, https → wss, without a trailing slash. */
export function webSocketUrl(publicUrl: string): string {
  return publicUrl.replace(/^http(s?):\/\//, "ws$1://").replace(/\/+$/, "");
}
