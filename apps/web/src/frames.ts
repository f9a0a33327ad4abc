// The picture of one tick that the game client decodes from the engine's frames, as the page draws it.
export type { ClientPipe, ClientView } from "@flaplab/game-protocol";
