/**
 * Text lengths as the contract counts them: in Unicode code points (what JSON Schema's `maxLength`
 * counts), not UTF-16 units, so that an emoji counts as one character, as the client counts it.
 */

/** The number of code points of `text`. */
export function codePointLength(text: string): number {
  let length = 0;
  // iterating a string yields code points, one surrogate pair at a time
  for (const _ of text) length++;
  return length;
}

/** `text` cut after `max` code points (never inside a surrogate pair). */
export function cutToCodePoints(text: string, max: number): string {
  let cut = 0;
  let count = 0;
  for (const point of text) {
    if (count === max) break;
    cut += point.length;
    count++;
  }
  return text.slice(0, cut);
}
