/**
 * The signaling modules Convene runs, by namespace. Which of them a room may use is its tariff's
 * `enabled_modules` (src/domain/tariffs/modules.ts lists them with their features).
 */
import { createChatModule } from './chat/chat.module.js';
import { createControlModule } from './control/control.module.js';
import { createEchoModule } from './echo/echo.module.js';
import { createModerationModule } from './moderation/moderation.module.js';
import type { ControlModule, ModuleDeps, SignalingModule } from './module.js';
import { createTimerModule } from './timer/timer.module.js';

export interface SignalingModules {
  control: ControlModule;
  byNamespace: ReadonlyMap<string, SignalingModule>;
}

export function createSignalingModules(deps: Omit<ModuleDeps, 'modules'>): SignalingModules {
  const byNamespace = new Map<string, SignalingModule>();
  const full: ModuleDeps = { ...deps, modules: () => byNamespace };
  const control = createControlModule(full);
  for (const module of [control, createEchoModule(full), createModerationModule(full), createTimerModule(full), createChatModule(full)]) {
    byNamespace.set(module.namespace, module);
  }
  return { control, byNamespace };
}
