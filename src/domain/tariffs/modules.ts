/**
 * The signaling modules Convene runs, each with the features a tariff can switch off
 * (`"<module>::<feature>"` in `disabled_features`). A tariff's `enabled_modules` are the offered
 * modules minus its `disabled_modules`. A new module is one more entry here.
 */
export interface SignalingModuleDefinition {
  readonly id: string;
  readonly features: readonly string[];
}

export const SIGNALING_MODULES: readonly SignalingModuleDefinition[] = [
  { id: 'control', features: [] },
  { id: 'echo', features: [] },
  { id: 'moderation', features: [] },
  { id: 'timer', features: [] },
  { id: 'chat', features: [] },
];

/** Audio and video: offered only when the service has Janus servers (`[media] janus_urls`). */
export const MEDIA_MODULE: SignalingModuleDefinition = { id: 'media', features: [] };

/** Every module a tariff may name, offered or not. */
export const KNOWN_MODULES: readonly SignalingModuleDefinition[] = [...SIGNALING_MODULES, MEDIA_MODULE];

/** The modules this service offers: media only with Janus configured. */
export function offeredModules(media: { janus_urls: readonly string[] }): readonly SignalingModuleDefinition[] {
  return media.janus_urls.length > 0 ? KNOWN_MODULES : SIGNALING_MODULES;
}
