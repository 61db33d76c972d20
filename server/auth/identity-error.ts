/**
 * Why an identity operation (owner setup, users, namespaces, members, groups)
 * did nothing. The message is written for the person at the form and is safe
 * to show; the code is what a transport maps to its status (tRPC, REST).
 */
export type IdentityErrorCode = "invalid-input" | "not-found" | "conflict" | "forbidden";

export class IdentityError extends Error {
  override name = "IdentityError";
  constructor(
    readonly code: IdentityErrorCode,
    message: string,
  ) {
    super(message);
  }
}
