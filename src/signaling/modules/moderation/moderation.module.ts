// PLACEHOLDER: replaced by the moderation module's implementation (issue 6, in progress).
import type { SignalingModule, ModuleDeps } from '../module.js';

export function createModerationModule(_deps: ModuleDeps): SignalingModule {
  throw new Error('the moderation module is not built yet');
}
