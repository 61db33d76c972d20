import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import type { ScryptOptions } from "node:crypto";

/**
 * Password hashing with scrypt (node:crypto): memory-hard, so a stolen Users
 * table cannot be brute-forced on GPUs the way a fast hash can.
 *
 * The stored string is self-describing, PHC style:
 * `$scrypt$ln=15,r=8,p=1$<salt, base64>$<hash, base64>`, so the cost can be
 * raised later without invalidating existing hashes: each is verified with the
 * parameters it was made with.
 *
 * Cost: ln=15 (N = 32768), r=8 uses 128·N·r = 32 MiB and took ~160 ms here
 * (ln=16: ~330 ms, ln=17: ~650 ms). Twice scrypt's own "interactive login"
 * recommendation (ln=14), while a burst of sign-ins on a 2-core machine still
 * answers in well under a second. The hash runs on libuv's thread pool, not on
 * the event loop.
 */

interface ScryptParams {
  ln: number;
  r: number;
  p: number;
}

const DEFAULT_PARAMS: ScryptParams = { ln: 15, r: 8, p: 1 };
const SALT_BYTES = 16;
const KEY_BYTES = 32;

// A hash read from the database is trusted only within these bounds: a tampered
// or corrupt row asking for ln=30 would otherwise pin a thread and gigabytes of
// memory on every sign-in attempt for that email.
const BOUNDS = { ln: [10, 20], r: [1, 32], p: [1, 16] } as const;

function derive(password: string, salt: Buffer, params: ScryptParams, length: number): Promise<Buffer> {
  const N = 2 ** params.ln;
  const options: ScryptOptions = { N, r: params.r, p: params.p, maxmem: 2 * 128 * N * params.r };
  return new Promise((resolve, reject) => {
    scrypt(password.normalize("NFC"), salt, length, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** Hashes a password with a fresh random salt into the self-describing string stored in Users.passwordHash. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const key = await derive(password, salt, DEFAULT_PARAMS, KEY_BYTES);
  return `$scrypt$${currentHashParameters()}$${salt.toString("base64")}$${key.toString("base64")}`;
}

function parseHash(hash: string): { params: ScryptParams; salt: Buffer; key: Buffer } | null {
  const match = /^\$scrypt\$ln=(\d+),r=(\d+),p=(\d+)\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/.exec(hash);
  if (!match) return null;
  const params = { ln: Number(match[1]), r: Number(match[2]), p: Number(match[3]) };
  for (const name of ["ln", "r", "p"] as const) {
    const [low, high] = BOUNDS[name];
    if (params[name] < low || params[name] > high) return null;
  }
  const salt = Buffer.from(match[4] ?? "", "base64");
  const key = Buffer.from(match[5] ?? "", "base64");
  if (salt.length < 8 || key.length < 16) return null;
  return { params, salt, key };
}

/** The parameters of a well-formed, in-bounds hash (`ln=15,r=8,p=1`), or null: what verifyPassword would run scrypt with. */
export function hashParameters(hash: string): string | null {
  const parsed = parseHash(hash);
  return parsed ? `ln=${parsed.params.ln},r=${parsed.params.r},p=${parsed.params.p}` : null;
}

/**
 * Whether `password` matches `hash`. A malformed or out-of-bounds hash is a
 * mismatch, never an exception: sign-in must answer the same way whatever is
 * stored. Compared in constant time.
 */
export async function verifyPassword(password: string, hash: string): Promise<boolean> {
  const parsed = parseHash(hash);
  if (!parsed) return false;
  const candidate = await derive(password, parsed.salt, parsed.params, parsed.key.length);
  return timingSafeEqual(candidate, parsed.key);
}

/**
 * A hash of 32 random bytes that were thrown away once it was made, with
 * today's parameters. Sign-in verifies against it when the email has no user
 * (or no password), so an unknown email costs the same scrypt as a wrong
 * password and the response time does not reveal which emails have accounts.
 * A constant rather than made at start-up, so the first unknown email a
 * process sees is not the one slow answer (hashing it would take a second
 * scrypt). Knowing its input would not help anyone: sign-in never accepts a
 * match against the decoy. passwords.test.ts keeps its parameters in step.
 */
export const DECOY_PASSWORD_HASH = "$scrypt$ln=15,r=8,p=1$y1ic72v3Qw2cbvNcx9HL5w==$jBMrvyvjtn6+SBcQCCzr5DM0IiE5ByXSQcpOxHwjtgw=";

/** The parameter part of the hashes hashPassword makes now, e.g. `ln=15,r=8,p=1`. */
export function currentHashParameters(): string {
  const { ln, r, p } = DEFAULT_PARAMS;
  return `ln=${ln},r=${r},p=${p}`;
}
