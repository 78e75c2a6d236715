/**
 * The signaling modules Convene runs, each with the features a tariff can switch off
 * (`"<module>::<feature>"` in `disabled_features`). A tariff's `enabled_modules` are these minus its
 * `disabled_modules`. A new module is one more entry here.
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
