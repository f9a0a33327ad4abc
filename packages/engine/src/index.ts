export { engineComponent, createEngine, courseOf, playStateOf, MAX_PIPES } from "./engine.js";
export type { EngineDeps } from "./engine.js";
export { GameTable, checkGameId, birdOrDefault, DEFAULT_MAX_GAMES, MAX_GAME_ID_LENGTH } from "./games.js";
export type { Game, GameOwner, GameTableOptions, InputRecord, InputResult, NewGame } from "./games.js";
