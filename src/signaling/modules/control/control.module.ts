// PLACEHOLDER: replaced by the control module's implementation (issue 6, in progress).
import type { ControlModule, ModuleDeps } from '../module.js';

export function createControlModule(_deps: ModuleDeps): ControlModule {
  throw new Error('the control module is not built yet');
}
