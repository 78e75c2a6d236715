/**
 * The `echo` namespace: answers every command with the command's own payload, to the sender only,
 * before and after `join` alike. Clients use it as an application-level heartbeat.
 */
import type { ModuleDeps, SignalingModule } from '../module.js';

export function createEchoModule(_deps: ModuleDeps): SignalingModule {
  return {
    namespace: 'echo',
    async handleCommand(session, command) {
      session.send('echo', { ...command });
    },
  };
}
