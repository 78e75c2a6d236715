/** Random tokens for tickets and resumption (64 alphanumerics, as the reference and the contract shape them). */
import { randomBytes } from 'node:crypto';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** The largest multiple of 62 below 256: bytes at or above it are dropped, so no character is favoured. */
const UNBIASED_BELOW = 256 - (256 % ALPHABET.length);

export const TOKEN_LENGTH = 64;

/** `length` characters of [A-Za-z0-9] from the CSPRNG (about 5.95 bits each: 381 bits for 64). */
export function randomAlphanumeric(length = TOKEN_LENGTH): string {
  let token = '';
  while (token.length < length) {
    for (const byte of randomBytes(length)) {
      if (byte < UNBIASED_BELOW) token += ALPHABET.charAt(byte % ALPHABET.length);
      if (token.length === length) break;
    }
  }
  return token;
}
