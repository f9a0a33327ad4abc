import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startChild } from "./child.js";
const dir = await mkdtemp(join(tmpdir(), "exp-"));
const server = await startChild("stream-server.ts");
const clients = await startChild("stream-clients.ts");
const info: any = await server.request({ type: "start", keysDir: dir });
console.log(info.url, info.transports);
for (const n of [100, 400, 900]) {
  const ids: string[] = await server.request({ type: "games", count: n, prefix: `s${n}` });
  const t = performance.now();
  const o = await clients.request({ type: "open", url: info.url, certSha256: info.certSha256, token: info.token, gameIds: ids, concurrency: 16 });
  console.log(n, "open", o, Math.round(performance.now() - t));
  await clients.request({ type: "start", rampMs: 1000 });
  await new Promise((r) => setTimeout(r, 1000));
  await server.request({ type: "reset" }); await clients.request({ type: "reset" });
  await new Promise((r) => setTimeout(r, 3000));
  const s: any = await server.request({ type: "stats" }); const c: any = await clients.request({ type: "stats" });
  console.log(n, JSON.stringify(s), JSON.stringify(c));
  await clients.request({ type: "close" }); await server.request({ type: "clear" });
}
await clients.stop(); await server.stop();
