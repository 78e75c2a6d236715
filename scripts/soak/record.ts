// What the soak counts and what it found wrong, shared by the signaling rooms and the HTTP mix.
import { randomBytes } from 'node:crypto';

/** Counts by key (an operation and its status, a frame's namespace and message …). */
export class Counter {
  private readonly counts = new Map<string, number>();

  add(key: string, by = 1): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + by);
  }

  get(key: string): number {
    return this.counts.get(key) ?? 0;
  }

  total(): number {
    let sum = 0;
    for (const count of this.counts.values()) sum += count;
    return sum;
  }

  /** Every key and its count, the largest first. */
  entries(): Record<string, number> {
    return Object.fromEntries([...this.counts].sort((a, b) => b[1] - a[1]));
  }
}

/** Everything that went wrong: counted, and the first ones kept word for word. */
export class Problems {
  count = 0;
  readonly first: string[] = [];

  add(problem: string): void {
    this.count++;
    if (this.first.length < 40) this.first.push(problem.length > 1_500 ? `${problem.slice(0, 1_500)} …` : problem);
  }
}

/**
 * Arrivals counted by key, with waits for a key to reach a number: "every stable participant of the
 * room got `started` of this timer" is the key `started <id>` reaching the number of them.
 */
export class Tally {
  private readonly counts = new Map<string, number>();
  private readonly waits = new Map<string, { target: number; resolve: () => void }>();

  add(key: string): void {
    const count = (this.counts.get(key) ?? 0) + 1;
    this.counts.set(key, count);
    const wait = this.waits.get(key);
    if (wait && count >= wait.target) {
      this.waits.delete(key);
      wait.resolve();
    }
  }

  /** Resolves once `key` has `target` arrivals; rejects after `timeoutMs` naming how many came. */
  reach(key: string, target: number, timeoutMs: number): Promise<void> {
    if ((this.counts.get(key) ?? 0) >= target) return Promise.resolve();
    return quiet(
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.waits.delete(key);
          reject(new Error(`${this.counts.get(key) ?? 0} of ${target} arrivals of "${key}" within ${timeoutMs} ms`));
        }, timeoutMs);
        this.waits.set(key, {
          target,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        });
      }),
    );
  }

  /** Forgets the keys that contain `part` (a finished timer run's). */
  forget(part: string): void {
    for (const key of this.counts.keys()) if (key.includes(part)) this.counts.delete(key);
  }
}

/**
 * The promise, marked as handled: when a sibling wait of `Promise.all` failed first, or a command
 * could not be sent after its answer was awaited, its own later timeout is no unhandled rejection
 * (which would end `npm run soak` before its report). Awaiting it still throws.
 */
export function quiet<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}

/**
 * A client address (`X-Forwarded-For`; the soak server trusts the proxy header) no other request of
 * any run has used: the brute-force limits count per source address, failures and attempts in
 * flight alike (so more than 10 concurrent invite-code starts from one address are refused for a
 * second), and in Redis across runs and test files. A thousand guests come from a thousand
 * addresses. IPv6 documentation addresses, with a prefix of this run's own.
 */
const runPrefix = `2001:db8:50a:${randomBytes(2).toString('hex')}`;
let addresses = 0;
export const freshSource = (): string => `${runPrefix}::${(++addresses).toString(16)}`;

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Sleeps `ms`, or less when `stopping()` turns true meanwhile (checked every 250 ms). */
export async function pause(ms: number, stopping: () => boolean): Promise<void> {
  const until = Date.now() + ms;
  while (!stopping() && Date.now() < until) await sleep(Math.max(0, Math.min(250, until - Date.now())));
}

/** A seeded pseudo-random source (mulberry32): a failing run can be repeated with its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Runs `task` for 0..count-1 with at most `concurrency` at a time. */
export async function pool(count: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}
