// PLACEHOLDER: replaced by the echo module's implementation (issue 6, in progress).
import type { SignalingModule, ModuleDeps } from '../module.js';

export function createEchoModule(_deps: ModuleDeps): SignalingModule {
  throw new Error('the echo module is not built yet');
}
