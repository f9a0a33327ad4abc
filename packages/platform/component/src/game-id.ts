/** Longest game id any component takes. */
export const MAX_GAME_ID_LENGTH = 64;
const GAME_ID = /^[\x21-\x7e]+$/;

/**
 * Why a game id is unusable, or undefined: 1…64 printable ASCII characters, no spaces. Every
 * component checks a game id it is given with this before it uses it (a store key, a call).
 */
export function checkGameId(id: string): string | undefined {
  if (id.length === 0) return "game id is required";
  if (id.length > MAX_GAME_ID_LENGTH) return `game id longer than ${MAX_GAME_ID_LENGTH} characters`;
  if (!GAME_ID.test(id)) return "game id must be printable ASCII without spaces";
  return undefined;
}
