import { randomBytes } from "node:crypto";

/**
 * A version 7 UUID (RFC 9562): 48 bits of Unix milliseconds, then random bits,
 * so ids sort by creation time like Postgres 18's uuidv7(), which the tables'
 * id columns default to. Made here when the id is needed before its row is
 * inserted (an execution's idempotency key names it): a `SELECT uuidv7()` cost
 * every start a round trip of its own.
 */
export function uuidv7(nowMs: number = Date.now()): string {
  const bytes = randomBytes(16);
  // 48-bit big-endian timestamp; Number keeps 53 bits exactly.
  bytes.writeUIntBE(nowMs, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70; // version 7
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // variant 10
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
