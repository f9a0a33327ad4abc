import { validateCourse } from "@flaplab/physics";
import type { StoredGame } from "@flaplab/snapshots";
import { checkWorld } from "./engine.js";

/** A username as auth registers it (3–32 of letters, digits, '_', '.', '-'). */
export const USERNAME_PATTERN = /^[A-Za-z0-9_.-]{3,32}$/;

/** Largest tick a stored game may stand at: a game of 100 pipes is over long before (≈ 2 h of ticks). */
const MAX_STORED_TICK = 200_000;
/** Largest input sequence number a stored game may hold (a client's seq is a uint32; a game sees far fewer). */
const MAX_STORED_SEQ = 1_000_000;

/**
 * Why stored game `gameId` (origin and snapshot, as read back from the store) is not one this
 * engine could have written, or undefined: the ids match, the owner is a username, the world
 * passes StartGame's checks (`checkWorld`, `validateCourse`), and the snapshot's numbers are
 * finite and within what a game of that world can reach (score at most one per pipe and per tick,
 * the closest pipe within the course).
 */
export function checkStoredGame(stored: StoredGame, gameId: string): string | undefined {
  const { origin, snapshot } = stored;
  if (origin.gameId !== gameId || snapshot.gameId !== gameId) return `stored ids ${origin.gameId} / ${snapshot.gameId} are not ${gameId}`;
  if (!USERNAME_PATTERN.test(origin.owner)) return "the stored owner is not a username";
  const world = origin.world;
  const bird = origin.bird;
  if (!bird) return "no bird";
  const worldProblem = checkWorld(world, bird);
  if (worldProblem !== undefined) return worldProblem;
  const courseProblem = validateCourse(
    { pipeSpacing: world!.pipeSpacing, viewport: { width: world!.viewport!.width, height: world!.viewport!.height }, pipes: world!.pipes },
    { width: bird.width, height: bird.height },
  );
  if (courseProblem !== undefined) return courseProblem;
  const pipes = world!.pipes.length;
  const { tick, score, closestPipe, lastInputSeq, reflectedSeq } = snapshot;
  if (tick > MAX_STORED_TICK) return `tick ${tick} is beyond any game (at most ${MAX_STORED_TICK})`;
  if (score < 0 || score > pipes || score > tick) return `score ${score} is more than a game at tick ${tick} of ${pipes} pipes can have`;
  if (closestPipe > pipes) return `closest pipe ${closestPipe} is outside the ${pipes}-pipe course`;
  if (lastInputSeq > MAX_STORED_SEQ || reflectedSeq > lastInputSeq) return `input seqs ${reflectedSeq} / ${lastInputSeq} are out of order or range`;
  for (const [name, value] of [
    ["bird y", snapshot.birdY],
    ["bird velocity", snapshot.birdVelocity],
    ["pipe speed", snapshot.pipeSpeed],
    ["pipe window x", snapshot.pipeWindowX],
    ["start time", snapshot.startedAtMs],
    ["creation time", origin.createdAtMs],
  ] as const) {
    if (!Number.isFinite(value)) return `${name} is not a finite number`;
  }
  const height = world!.viewport!.height;
  if (Math.abs(snapshot.birdY) > 2 * height || Math.abs(snapshot.birdVelocity) > height || Math.abs(snapshot.pipeSpeed) > height) {
    return "bird or pipes move outside what the world allows";
  }
  return undefined;
}
