/** Milliseconds since the epoch. Injected wherever expiry matters, so tests can jump ahead instead of sleeping. */
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
