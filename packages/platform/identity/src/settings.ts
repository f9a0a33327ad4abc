import { text } from "@flaplab/settings";

const pem = "Ed25519 PEM";

/** The key signing player tokens (read by `loadKeys`). */
export const JWT_PRIVATE_KEY = text({
  name: "FLAPLAB_JWT_PRIVATE_KEY",
  format: `${pem} (PKCS#8)`,
  description: "signs player tokens (auth)",
  defaultText: "key file in the data dir",
  readBy: "identity (every group)",
});

/** The key verifying player tokens (read by `loadKeys`). */
export const JWT_PUBLIC_KEY = text({
  name: "FLAPLAB_JWT_PUBLIC_KEY",
  format: `${pem} (SPKI)`,
  description: "verifies player tokens",
  defaultText: "derived from the private key / key file",
  readBy: "identity (every group)",
});

/** One component's own key (read by `loadComponentKeys`; `<NAME>`: the component, upper case). */
export const COMPONENT_KEY = text({
  name: "FLAPLAB_COMPONENT_KEY_<NAME>",
  format: pem,
  description: "each component's own key (signs that component's calls), for the components the group runs",
  defaultText: "key files in the data dir",
  readBy: "identity (every group)",
});

/** The public key of a component that calls this group (read by `loadComponentKeys`). */
export const COMPONENT_PUBLIC_KEY = text({
  name: "FLAPLAB_COMPONENT_PUBLIC_KEY_<NAME>",
  format: pem,
  description: "the public keys of the group's callers, one per calling component",
  defaultText: "key files in the data dir",
  readBy: "identity (every group)",
});

/** The stream-ticket key's private half (read by `loadComponentKeys`). */
export const TICKET_PRIVATE_KEY = text({
  name: "FLAPLAB_TICKET_PRIVATE_KEY",
  format: pem,
  description: "the stream-ticket key's private half, where the initiator or the engine runs",
  defaultText: "key file in the data dir",
  readBy: "identity",
});

/** The stream-ticket key's public half (read by `loadComponentKeys`). */
export const TICKET_PUBLIC_KEY = text({
  name: "FLAPLAB_TICKET_PUBLIC_KEY",
  format: pem,
  description: "the stream-ticket key's public half, where music runs",
  defaultText: "key file in the data dir",
  readBy: "identity",
});

/** The one key every component shared before each had its own: read only to refuse it. */
export const RETIRED_SERVICE_KEY = text({
  name: "FLAPLAB_SERVICE_PRIVATE_KEY",
  format: "any value (refused)",
  description: "no longer read: set, the process stops and names the per-component keys that replace it",
  defaultText: "unset",
  readBy: "identity",
});

/** Every variable identity reads. */
export const SETTINGS = [JWT_PRIVATE_KEY, JWT_PUBLIC_KEY, COMPONENT_KEY, COMPONENT_PUBLIC_KEY, TICKET_PRIVATE_KEY, TICKET_PUBLIC_KEY, RETIRED_SERVICE_KEY];
