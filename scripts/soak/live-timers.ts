// Counts the soak server's live timers: those set with the global setTimeout/setInterval and not
// yet fired (timeouts) or cleared. process.getActiveResourcesInfo() cannot be used for that: it lists
// only timers that keep the process alive, and Convene unrefs every timer it sets (a countdown's
// expiry, a socket's ping and pong deadline, the stores' sweeps), so a leaked one would not show.
//
// Imported first by soak-server.ts, before Convene and its libraries: they call the globals at the
// time they set a timer, so every timer of theirs passes through here.
import { promisify } from 'node:util';

const live = new Set<NodeJS.Timeout>();
/** Cleared timers: refresh() does not arm them again (Node ignores it), unlike a fired timeout's. */
const cleared = new WeakSet<NodeJS.Timeout>();
const original = {
  setTimeout: globalThis.setTimeout,
  setInterval: globalThis.setInterval,
  clearTimeout: globalThis.clearTimeout,
  clearInterval: globalThis.clearInterval,
};

type Callback = (...args: unknown[]) => void;

function trackedTimeout(callback: Callback, ms?: number, ...args: unknown[]): NodeJS.Timeout {
  if (typeof callback !== 'function') return original.setTimeout(callback, ms, ...args); // throws as Node does
  const timer = original.setTimeout(
    function (this: unknown, ...given: unknown[]) {
      // refresh() may arm a fired timeout again; then it is live again until it fires
      live.delete(timer);
      callback.apply(this, given);
    },
    ms,
    ...args,
  );
  live.add(timer);
  const refresh = timer.refresh.bind(timer);
  timer.refresh = () => {
    if (!cleared.has(timer)) live.add(timer);
    return refresh();
  };
  return timer;
}

function trackedInterval(callback: Callback, ms?: number, ...args: unknown[]): NodeJS.Timeout {
  const timer = original.setInterval(callback, ms, ...args);
  live.add(timer);
  return timer;
}

function clear(timer: unknown): void {
  if (!(timer instanceof Object)) return;
  live.delete(timer as NodeJS.Timeout);
  cleared.add(timer as NodeJS.Timeout);
}

// util.promisify(setTimeout) keeps working (its timers are not counted)
Object.defineProperty(trackedTimeout, promisify.custom, { value: (original.setTimeout as unknown as Record<symbol, unknown>)[promisify.custom] });
globalThis.setTimeout = trackedTimeout as unknown as typeof setTimeout;
globalThis.setInterval = trackedInterval as unknown as typeof setInterval;
globalThis.clearTimeout = (timer?: NodeJS.Timeout | string | number) => {
  clear(timer);
  original.clearTimeout(timer);
};
globalThis.clearInterval = (timer?: NodeJS.Timeout | string | number) => {
  clear(timer);
  original.clearInterval(timer);
};

/** Timers set and neither fired (timeouts) nor cleared, whether they keep the process alive or not. */
export const liveTimers = (): number => live.size;
