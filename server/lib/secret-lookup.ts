/**
 * A namespace secret's value by name, or null when there is none: how the
 * parts that need a secret's plaintext — a webhook checking a signature, the
 * relay signing a status listener's call — ask for it, without holding the
 * store or the sealing key themselves.
 */
export type SecretLookup = (namespaceId: string, name: string) => Promise<string | null>;
