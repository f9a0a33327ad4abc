// One real Chromium game per stream link against the monolith (`pnpm dev monolith`), and one played
// through the automation API on the tick clock. The same game against microservices is in
// play-microservices.slow.test.ts (the full tier).
import { describePlaying } from "./play-game.js";

describePlaying("monolith", ["webtransport", "websocket"], { automation: true });
