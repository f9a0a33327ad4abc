// Times generateWorld for FlappyGo's 480x640 viewport: `pnpm exec tsx bin/bench.ts [calls]`.
import { generateWorld, randomSeed } from "../src/index.js";

const calls = Number(process.argv[2] ?? 1000);
const viewport = { width: 480, height: 640 };
const seeds = Array.from({ length: calls }, () => randomSeed());

let sink = 0;
for (let i = 0; i < 2000; i++) sink += generateWorld(BigInt(i), viewport).pipeSpacing; // warm-up

const times: number[] = [];
for (const seed of seeds) {
  const t0 = process.hrtime.bigint();
  sink += generateWorld(seed, viewport).pipeSpacing;
  times.push(Number(process.hrtime.bigint() - t0) / 1000);
}
times.sort((a, b) => a - b);
const at = (q: number): string => times[Math.min(times.length - 1, Math.floor(q * times.length))]!.toFixed(1);
console.log(
  `generateWorld x${calls} after warm-up: median ${at(0.5)} µs, p90 ${at(0.9)} µs, p99 ${at(0.99)} µs, max ${at(1)} µs (checksum ${sink})`,
);
