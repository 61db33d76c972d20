// No 0/O, 1/l/I: the password is read out or typed by someone else.
const ALPHABET = "abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789";

/**
 * An initial password for a new user, from the browser's CSPRNG: 20 characters
 * of 56 is about 116 bits, comfortably past any policy. Rejection sampling
 * keeps every character equally likely (256 is not a multiple of 56).
 */
export function generatePassword(length = 20, random: (bytes: Uint8Array) => Uint8Array = (b) => crypto.getRandomValues(b)): string {
  const limit = 256 - (256 % ALPHABET.length);
  let out = "";
  while (out.length < length) {
    for (const byte of random(new Uint8Array(length * 2))) {
      if (byte < limit && out.length < length) out += ALPHABET[byte % ALPHABET.length];
    }
  }
  return out;
}
