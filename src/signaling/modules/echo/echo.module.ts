/**
 * The `echo` namespace: answers every command with the command's own payload, to the sender only,
 * before and after `join` alike. Clients use it as an application-level heartbeat.
 *
 * Its schema takes any payload, and a frame within the size limit can nest arrays some 30,000
 * deep, which JSON.parse reads but JSON.stringify cannot write back (it recurses and runs out of
 * stack): a payload nesting deeper than MAX_NESTING is answered `invalid_message` instead.
 */
import { sendError } from '../../errors.js';
import type { ModuleDeps, SignalingModule } from '../module.js';

/** How deep objects and arrays may nest in an echoed payload, the payload itself counting as one. */
export const MAX_NESTING = 100;

export function createEchoModule(_deps: ModuleDeps): SignalingModule {
  return {
    namespace: 'echo',
    async handleCommand(session, command) {
      if (nestsDeeperThan(command, MAX_NESTING)) {
        sendError(session, 'control', 'invalid_message', {
          namespace: 'echo',
          action: command.action,
          problems: [`/payload nests deeper than ${MAX_NESTING} levels`],
        });
        return;
      }
      session.send('echo', { ...command });
    },
  };
}

/** Whether objects and arrays nest deeper than `limit` in the value; measured without recursion, and stops at the limit. */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return false;
}
