/**
 * Errors nobody handled: an 'error' event without a listener, a rejection nobody awaited. Vitest
 * reports them after the run; a fault test fails on them instead, since in production each ends the
 * process. Call at the top of the test file; the returned list fills as they come.
 */
export function recordUnhandledErrors(): unknown[] {
  const unhandled: unknown[] = [];
  const record = (err: unknown) => void unhandled.push(err);
  process.on('uncaughtException', record);
  process.on('unhandledRejection', record);
  return unhandled;
}
