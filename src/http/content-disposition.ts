/**
 * `Content-Disposition: attachment` with a file name (RFC 6266). File names are user input: the
 * quoted `filename` is an ASCII fallback with anything that could end the quoted string, break the
 * header line or confuse old clients replaced by `_`; the exact name travels in `filename*`
 * (RFC 8187: UTF-8, percent-encoded) whenever the fallback differs from it.
 */

// RFC 8187 attr-char: ALPHA / DIGIT / "!#$&+-.^_`|~"; everything else is percent-encoded
const NOT_ATTR_CHAR = /[^A-Za-z0-9!#$&+\-.^_`|~]/gu;
// printable ASCII except the quoted-string's own `"` and `\`, and `%` (some clients decode it)
const NOT_SAFE_IN_QUOTES = /[^\x20-\x21\x23-\x24\x26-\x5b\x5d-\x7e]/gu;

function encodeExtValue(name: string): string {
  return name.replace(NOT_ATTR_CHAR, (char) =>
    Array.from(Buffer.from(char, 'utf8'), (byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join(''),
  );
}

export function attachmentDisposition(filename: string): string {
  const fallback = filename.replace(NOT_SAFE_IN_QUOTES, '_');
  const header = `attachment; filename="${fallback}"`;
  return fallback === filename ? header : `${header}; filename*=UTF-8''${encodeExtValue(filename)}`;
}
