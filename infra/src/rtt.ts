/**
 * Median round-trip times between AWS regions (ms): the cloudping.co P50-over-one-year snapshot
 * (2025 or later), A→B and B→A averaged. Routes change; treat these as a dated reference.
 */
export const REGION_RTT_MS: Readonly<Record<string, Readonly<Record<string, number>>>> = {
  "us-east-1": { "us-west-2": 64, "eu-west-1": 70, "eu-central-1": 93, "ap-northeast-1": 149, "ap-southeast-1": 219, "sa-east-1": 115 },
  "us-west-2": { "us-east-1": 64, "eu-west-1": 118, "eu-central-1": 142, "ap-northeast-1": 98, "ap-southeast-1": 161, "sa-east-1": 175 },
  "eu-west-1": { "us-east-1": 70, "us-west-2": 118, "eu-central-1": 27, "ap-northeast-1": 201, "ap-southeast-1": 182, "sa-east-1": 178 },
  "eu-central-1": { "us-east-1": 93, "us-west-2": 142, "eu-west-1": 27, "ap-northeast-1": 227, "ap-southeast-1": 161, "sa-east-1": 204 },
  "ap-northeast-1": { "us-east-1": 149, "us-west-2": 98, "eu-west-1": 201, "eu-central-1": 227, "ap-southeast-1": 71, "sa-east-1": 258 },
  "ap-southeast-1": { "us-east-1": 219, "us-west-2": 161, "eu-west-1": 182, "eu-central-1": 161, "ap-northeast-1": 71, "sa-east-1": 327 },
  "sa-east-1": { "us-east-1": 115, "us-west-2": 175, "eu-west-1": 178, "eu-central-1": 204, "ap-northeast-1": 258, "ap-southeast-1": 327 },
};

/** Median RTT between two different regions of the table; undefined otherwise. */
export function regionRttMs(a: string, b: string): number | undefined {
  return a === b ? undefined : REGION_RTT_MS[a]?.[b];
}
