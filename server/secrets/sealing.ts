import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";

/**
 * Sealing secret values for the Secrets table: AES-256-GCM under a key
 * derived from the instance secret (NODE_FLOW_SECRET) with HKDF-SHA256, the
 * namespace and the secret's name bound in as associated data — a sealed
 * value copied onto another secret's row does not open. The sealed bytes
 * carry the key's id (a fingerprint of the derived key), so the instance
 * secret can rotate: values sealed under a previous one still open while it
 * is listed, and re-sealing moves them to the current one.
 *
 *   [1 byte format = 1][8 bytes key id][12 bytes nonce][16 bytes tag][ciphertext]
 */

const FORMAT = 1;
const KEY_ID_BYTES = 8;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const HEADER_BYTES = 1 + KEY_ID_BYTES + NONCE_BYTES + TAG_BYTES;

export interface SealingKey {
  id: Buffer;
  key: Buffer;
}

/** The sealing key an instance secret derives. */
export function sealingKeyOf(instanceSecret: string): SealingKey {
  const key = Buffer.from(hkdfSync("sha256", instanceSecret, "node-flow/secrets", "secret-values/v1", 32));
  return { id: createHash("sha256").update(key).digest().subarray(0, KEY_ID_BYTES), key };
}

/** The keys values may be sealed under: the current one first (it seals), then previous ones (they only open). */
export class SealingKeys {
  readonly current: SealingKey;
  private readonly all: SealingKey[];

  constructor(currentSecret: string, previousSecrets: readonly string[] = []) {
    this.current = sealingKeyOf(currentSecret);
    this.all = [this.current, ...previousSecrets.map(sealingKeyOf)];
  }

  find(id: Buffer): SealingKey | undefined {
    return this.all.find((k) => k.id.equals(id));
  }
}

function associatedData(namespaceId: string, name: string): Buffer {
  return Buffer.from(`${namespaceId}\u0000${name}`, "utf8");
}

export function sealSecretValue(keys: SealingKeys, where: { namespaceId: string; name: string }, value: string): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv("aes-256-gcm", keys.current.key, nonce);
  cipher.setAAD(associatedData(where.namespaceId, where.name));
  const ciphertext = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
  return Buffer.concat([Buffer.from([FORMAT]), keys.current.id, nonce, cipher.getAuthTag(), ciphertext]);
}

export class SecretUnsealError extends Error {
  override name = "SecretUnsealError";
}

/** The value, or a SecretUnsealError saying why not (an unknown key, a changed row) — never the value in a message. */
export function openSecretValue(keys: SealingKeys, where: { namespaceId: string; name: string }, sealed: Buffer): string {
  if (sealed.length < HEADER_BYTES || sealed[0] !== FORMAT) throw new SecretUnsealError(`the sealed value of ${where.name} is not in a format this version reads`);
  const key = keys.find(sealed.subarray(1, 1 + KEY_ID_BYTES));
  if (key === undefined) throw new SecretUnsealError(`${where.name} was sealed under an instance secret that is not configured (NODE_FLOW_SECRET, NODE_FLOW_PREVIOUS_SECRETS)`);
  const nonce = sealed.subarray(1 + KEY_ID_BYTES, 1 + KEY_ID_BYTES + NONCE_BYTES);
  const tag = sealed.subarray(1 + KEY_ID_BYTES + NONCE_BYTES, HEADER_BYTES);
  const decipher = createDecipheriv("aes-256-gcm", key.key, nonce);
  decipher.setAAD(associatedData(where.namespaceId, where.name));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(sealed.subarray(HEADER_BYTES)), decipher.final()]).toString("utf8");
  } catch {
    throw new SecretUnsealError(`the sealed value of ${where.name} does not open: it was changed, or moved from another secret`);
  }
}

/** Whether a sealed value is under the current key (a rotation re-seals the others). */
export function sealedUnderCurrent(keys: SealingKeys, sealed: Buffer): boolean {
  return sealed.length >= HEADER_BYTES && keys.current.id.equals(sealed.subarray(1, 1 + KEY_ID_BYTES));
}
