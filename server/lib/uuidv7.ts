import { randomBytes } from "node:crypto";

/** The last id's milliseconds and 12-bit sequence (RFC 9562 `rand_a`), for ids made from the clock. */
let lastMs = -1;
let lastSeq = 0;

/**
 * A version 7 UUID (RFC 9562): 48 bits of Unix milliseconds, a 12-bit
 * sequence, then random bits, so ids sort by creation time like Postgres 18's
 * uuidv7(), which the tables' id columns default to. Made here when the id is
 * needed before its row is inserted: an execution's idempotency key names it
 * (a `SELECT uuidv7()` cost every start a round trip of its own), and the
 * evaluator's finish names the tasks it inserts in the same round trip.
 *
 * Like Postgres's, the ids one process makes from the clock increase strictly,
 * within a millisecond too (RFC 9562's method 3, a counter in `rand_a`, moving
 * to the next millisecond when it runs out or the clock steps back): a dynamic
 * fork's instances, inserted in one statement, list in the order they were
 * made, as they did when Postgres gave them their ids. An explicit `nowMs` makes
 * an id of that time with a random sequence, outside that order.
 */
export function uuidv7(nowMs?: number): string {
  const bytes = randomBytes(16);
  let ms: number;
  let seq: number;
  if (nowMs === undefined) {
    ms = Date.now();
    if (ms > lastMs) {
      // A random start in the lower half leaves at least 2,048 ids for the millisecond.
      seq = bytes.readUInt16BE(6) & 0x7ff;
    } else {
      ms = lastMs;
      seq = lastSeq + 1;
      if (seq > 0xfff) {
        ms += 1;
        seq = 0;
      }
    }
    lastMs = ms;
    lastSeq = seq;
  } else {
    ms = nowMs;
    seq = bytes.readUInt16BE(6) & 0xfff;
  }
  // 48-bit big-endian timestamp; Number keeps 53 bits exactly.
  bytes.writeUIntBE(ms, 0, 6);
  bytes[6] = 0x70 | (seq >> 8); // version 7, then the sequence's high 4 bits
  bytes[7] = seq & 0xff;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // variant 10
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
