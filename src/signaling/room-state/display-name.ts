/**
 * The rule a participant's display name follows in the room, whoever gives it (`join`, a
 * moderator's `change_display_name`): trimmed, then 1 to 100 characters, counted as the contract
 * counts them (code points, not UTF-16 units).
 */
import { codePointLength } from '../../domain/code-points.js';

const MAX_DISPLAY_NAME = 100;

/** The trimmed name, or undefined when it breaks the rule. */
export function displayNameOf(requested: string): string | undefined {
  const name = requested.trim();
  const length = codePointLength(name);
  return length >= 1 && length <= MAX_DISPLAY_NAME ? name : undefined;
}
