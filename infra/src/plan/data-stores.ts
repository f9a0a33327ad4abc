import { ENV } from "./constants.js";
import { isSharded, type Placement, placeOf, placesOf } from "./placement.js";
import type { DatabasePlan, SnapshotStorePlan } from "./types.js";

// The stores a deployment keeps its data in: the score database, and the engines' snapshot store.

/** The score database (RDS Postgres) in the score group's region. */
export function planDatabases(placement: Placement): DatabasePlan[] {
  const scorePlace = placeOf(placement, "score");
  return [
    {
      name: "ScoreDatabase",
      engine: "postgres",
      component: "score",
      service: scorePlace.name,
      region: scorePlace.region,
      instance: "t4g.micro",
      storage: "20 GB",
      env: ENV.scoreDatabaseUrl,
    },
  ];
}

/** The engines' snapshot store, when the topology runs several engines: named to every engine and the initiator. */
export function planSnapshotStores(placement: Placement): SnapshotStorePlan[] {
  if (!isSharded(placement)) return [];
  const engines = placesOf(placement, "engine");
  return [
    {
      name: "SnapshotStore",
      region: engines[0]!.region,
      engine: "valkey",
      instance: "t4g.micro",
      services: [...engines, placeOf(placement, "initiator")].map((p) => p.name),
      env: ENV.snapshotStore,
    },
  ];
}
