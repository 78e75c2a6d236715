/**
 * The signaling modules Convene runs, by namespace. Which of them a room may use is its tariff's
 * `enabled_modules` (src/domain/tariffs/modules.ts lists them with their features).
 */
import { createChatModule } from './chat/chat.module.js';
import { createControlModule } from './control/control.module.js';
import { createEchoModule } from './echo/echo.module.js';
import { createMediaModule, type MediaDeps } from './media/media.module.js';
import { createModerationModule } from './moderation/moderation.module.js';
import type { ControlModule, ModuleDeps, SignalingModule } from './module.js';
import { createTimerModule } from './timer/timer.module.js';

export interface SignalingModules {
  control: ControlModule;
  byNamespace: ReadonlyMap<string, SignalingModule>;
}

/** `media`: the Janus servers, when `[media] janus_urls` names any; without them there is no media module. */
export function createSignalingModules(deps: Omit<ModuleDeps, 'modules'>, media?: MediaDeps): SignalingModules {
  const byNamespace = new Map<string, SignalingModule>();
  const full: ModuleDeps = { ...deps, modules: () => byNamespace };
  const control = createControlModule(full);
  const modules = [control, createEchoModule(full), createModerationModule(full), createTimerModule(full), createChatModule(full)];
  if (media) modules.push(createMediaModule(full, media));
  for (const module of modules) byNamespace.set(module.namespace, module);
  return { control, byNamespace };
}
