/** The error of work that did not settle in time. */
export class TimeoutError extends Error {
  constructor(what: string, ms: number) {
    super(`${what} did not answer within ${ms} ms`);
    this.name = 'TimeoutError';
  }
}

/**
 * Settles as `work` does, or rejects with a TimeoutError after `ms`, whichever comes first. The work
 * itself goes on (a query cannot be taken back); its late outcome is ignored. For probes and scrapes
 * that must answer even when what they ask hangs.
 */
export function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimeoutError(what, ms)), ms);
  });
  work.catch(() => {}); // a failure after the timeout is nobody's to report
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}
