// The Chromium game of play.test.ts against microservices: six processes, every call networked.
import { describePlaying } from "./play-game.js";

describePlaying("microservices", ["webtransport"]);
