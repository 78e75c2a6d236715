/**
 * Hands a socket's events (frames, the close) to the signaling connection one per task of the event
 * loop, as browsers dispatch them. Node's WebSockets (the `ws` package's and the global one)
 * dispatch every frame of one network read within one task: code resumed by `await next(a)` runs
 * as a microtask after that task, so a frame b read together with a would be dispatched before the
 * `next(b)` it calls could wait for it, and lost to it. Here an event dispatched in the task of an
 * earlier one waits for a later task, and every event after it waits its turn (a close never
 * overtakes a frame). An event alone in its task, as each is in a browser, is dispatched at once.
 */

/** Runs `task` in a later task of the event loop: setImmediate where there is one (Node), else a timeout. */
const inLaterTask: (task: () => void) => void =
  typeof (globalThis as { setImmediate?: unknown }).setImmediate === 'function'
    ? (task) => (globalThis as unknown as { setImmediate(task: () => void): unknown }).setImmediate(task)
    : (task) => setTimeout(task, 0);

/** A dispatcher: call it with each event, in order, as the socket reports it. */
export function onePerTask(): (event: () => void) => void {
  const waiting: Array<() => void> = [];
  /** An event was dispatched in this task: no microtask checkpoint has passed since. */
  let dispatchedInThisTask = false;

  const dispatch = (event: () => void) => {
    dispatchedInThisTask = true;
    queueMicrotask(() => (dispatchedInThisTask = false));
    event();
  };
  const dispatchWaiting = () => {
    try {
      dispatch(waiting.shift()!);
    } finally {
      if (waiting.length > 0) inLaterTask(dispatchWaiting);
    }
  };

  return (event) => {
    if (waiting.length === 0 && !dispatchedInThisTask) return dispatch(event);
    waiting.push(event);
    if (waiting.length === 1) inLaterTask(dispatchWaiting);
  };
}
