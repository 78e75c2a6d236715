// PLACEHOLDER: replaced by the timer module's implementation (issue 6, in progress).
import type { SignalingModule, ModuleDeps } from '../module.js';

export function createTimerModule(_deps: ModuleDeps): SignalingModule {
  throw new Error('the timer module is not built yet');
}
