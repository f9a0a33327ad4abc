// Prints the cloud plan of a stage (or of any topology file), one group's cloud topology, or the
// stage's estimated hourly cost. No AWS access: it only reads the topology file.
// Usage: flaplab-plan <stage | topology.json> [--stage <name>] [--domain <zone>] [--default-region <r>]
//                     [--image <uri>] [--topology-json <group>] [--cost]
import { parseArgs } from "node:util";
import { loadTopology } from "@flaplab/runtime";
import { readText } from "@flaplab/settings";
import { ENV, estimateHourlyCost, isStage, planDeployment, stageTopology } from "../src/index.js";
import { DOMAIN, IMAGE } from "../src/settings.js";

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    stage: { type: "string" },
    domain: { type: "string", default: readText(process.env, DOMAIN) ?? "flaplab.example.org" },
    "default-region": { type: "string" },
    image: { type: "string", default: readText(process.env, IMAGE) ?? "" },
    "topology-json": { type: "string" },
    cost: { type: "boolean", default: false },
  },
});
const target = positionals[0];
if (target === undefined) {
  process.stderr.write("usage: flaplab-plan <stage | topology.json> [--stage s] [--domain d] [--topology-json group] [--cost]\n");
  process.exit(2);
}
const topology = await loadTopology(isStage(target) ? stageTopology(target) : target);
const stage = values.stage ?? (isStage(target) ? target : topology.name);
const plan = planDeployment(topology, {
  stage,
  domain: values.domain,
  ...(values["default-region"] ? { defaultRegion: values["default-region"] } : {}),
  ...(values.image ? { image: values.image } : {}),
  // As sst.config.ts reads them: the stage's load generators, if any.
  load: { tasks: process.env.FLAPLAB_LOAD_TASKS, args: process.env.FLAPLAB_LOAD_ARGS },
});

if (values["topology-json"] !== undefined) {
  const service = plan.services.find((s) => s.group === values["topology-json"]);
  if (!service) throw new Error(`no group "${values["topology-json"]}" (groups: ${plan.services.map((s) => s.group).join(", ")})`);
  process.stdout.write(`${JSON.stringify(JSON.parse(service.environment[ENV.topologyJson]!), null, 2)}\n`);
} else if (values.cost) {
  const cost = estimateHourlyCost(plan);
  for (const l of cost.lines) {
    process.stdout.write(`${l.item.padEnd(28)} ${String(l.quantity).padStart(5)} ${l.unit.padEnd(8)} $${l.usdPerHour.toFixed(4)}/h\n`);
  }
  process.stdout.write(`${"total".padEnd(43)} $${cost.usdPerHour.toFixed(3)}/h\n`);
} else {
  process.stdout.write(`${JSON.stringify(plan, null, 2)}\n`);
}
