import { create } from "@bufbuild/protobuf";
import { HeaderSchema, type Header } from "./gen/connectrpc/conformance/v1/service_pb.js";

/** Fetch headers as the suite's `Header` list (one entry per name, values as Headers joins them). */
export function toProtoHeaders(headers: Headers): Header[] {
  const out: Header[] = [];
  headers.forEach((value, name) => {
    out.push(create(HeaderSchema, { name, value: [value] }));
  });
  return out;
}

/** Appends the suite's `Header` list to fetch headers. */
export function appendProtoHeaders(into: Headers, headers: readonly Header[]): void {
  for (const { name, value } of headers) for (const v of value) into.append(name, v);
}
