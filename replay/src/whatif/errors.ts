/** A problem with the command's input (a missing folder, a bad option): one line, exit code 2. */
export class WhatifInputError extends Error {
  override readonly name = "WhatifInputError";
}
