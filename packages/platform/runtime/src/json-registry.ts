import { createRegistry, type DescFile, type DescService, type Registry } from "@bufbuild/protobuf";

/**
 * The types JSON needs to read and write messages of `services`: every message of their proto
 * files and of the files those import. Without it, a `google.protobuf.Any` in a message cannot be
 * written or read as JSON ("... is not in the type registry"). Built once per service, never per call.
 */
export function jsonRegistryOf(services: readonly DescService[]): Registry {
  const files = new Set<DescFile>();
  const visit = (file: DescFile): void => {
    if (files.has(file)) return;
    files.add(file);
    for (const dep of file.dependencies) visit(dep);
  };
  for (const service of services) visit(service.file);
  return createRegistry(...files);
}
