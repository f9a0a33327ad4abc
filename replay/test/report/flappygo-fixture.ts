import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";

export const FG_SEED = "6977347407732442987";

/**
 * A tiny FlappyGo data folder: data/<deploy_time>/{deploy_type, collected_<ts>/…} with two runs.
 * Frames at 100.5, 133, 166, 199.5; inputs at 100, 133, 150.5; sounds at 120, 160, 170 (FlappyGo
 * writes inputs first, then audio, then frames).
 */
export async function writeFlappyGoData(root: string, deployType = "monolith_single_instance"): Promise<string> {
  const deploy = join(root, "20250509_174825");
  const collected = join(deploy, "collected_20250509_180000");
  await mkdir(collected, { recursive: true });
  await writeFile(join(deploy, "deploy_type"), `${deployType}\n`);
  const latency = [
    "type,direction,time",
    "input,send,100.000",
    "input,send,133.000",
    "input,send,150.500",
    "audio,recv,120.000",
    "audio,recv,160.000",
    "audio,recv,170.000",
    "frame,recv,100.500",
    "frame,recv,133.000",
    "frame,recv,166.000",
    "frame,recv,199.500",
    "",
  ].join("\n");
  for (const n of [1, 2]) {
    const run = join(collected, `client_seed_${FG_SEED}_run_${n}`);
    await mkdir(run, { recursive: true });
    await writeFile(join(run, "latency_data.csv"), latency);
    await writeFile(
      join(run, "extra_data.json"),
      JSON.stringify({ score: 7, auth_latency: n === 1 ? "45.678" : "54.321", seed: FG_SEED, initiator_latency: "12.345", game_id: `g-${n}` }),
    );
  }
  const header = "SrcSvcName,SrcSvcVerb,DestSvcName,DestSvcVerb,GameId,ReqTime";
  await mkdir(join(collected, "remote", "engine"), { recursive: true });
  await writeFile(
    join(collected, "remote", "engine", "stats.csv"),
    [header, "engine,Tick,music,PlaySound,g-1,1500000", "engine,Tick,music,PlaySound,g-1,2500000", "engine,Tick,music,PlaySound,g-2,3500000", "engine,Tick,music,PlaySound,g-other,900000000", ""].join("\n"),
  );
  await mkdir(join(collected, "remote", "initiator"), { recursive: true });
  await writeFile(join(collected, "remote", "initiator", "stats.csv"), [header, "initiator,StartGame,engine,StartGame,g-1,2000000", ""].join("\n"));
  // The copy taken before the seed change repeats g-1 (ignored) and holds g-2 (counted).
  await writeFile(
    join(collected, "remote", "initiator", "stats_old.csv"),
    [header, "initiator,StartGame,engine,StartGame,g-1,2000000", "initiator,StartGame,engine,StartGame,g-2,4000000", ""].join("\n"),
  );
  return deploy;
}
