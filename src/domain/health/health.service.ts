/**
 * Whether this instance's backing services answer: the database for `/health`, the database and
 * (when configured) Redis for `/ready`. Each is asked through a ping that server.ts hands in, and
 * given 2 s. `/ready` also says whether media works (a Janus server is up), without failing on it:
 * a meeting goes on without audio and video, so an instance without Janus still serves.
 */
import { TimeoutError, within } from '../within.js';

const PROBE_TIMEOUT_MS = 2_000;

/** A backing service that did not answer, as an entry of the 503's error body. */
export interface ProbeFailure {
  field: 'database' | 'redis';
  code: 'timeout' | 'unavailable';
  message: string;
}

export type MediaReadiness = 'up' | 'down' | 'not_configured';

export interface Readiness {
  failed: ProbeFailure[];
  redis: 'up' | 'not_configured';
  media: MediaReadiness;
}

export interface HealthService {
  databaseUp(): Promise<boolean>;
  readiness(): Promise<Readiness>;
}

export interface HealthDeps {
  pingDatabase: () => Promise<unknown>;
  /** Absent without `[redis] url`. */
  pingRedis?: () => Promise<unknown>;
  /** Whether a Janus server is up now (kept current by the media servers' connections, never asked here). */
  mediaStatus: () => MediaReadiness;
}

export function createHealthService({ pingDatabase, pingRedis, mediaStatus }: HealthDeps): HealthService {
  /** Undefined when the dependency answered; else why not. */
  const probe = async (field: ProbeFailure['field'], what: string, ask: () => Promise<unknown>): Promise<ProbeFailure | undefined> => {
    try {
      await within(ask(), PROBE_TIMEOUT_MS, what);
      return undefined;
    } catch (err) {
      // the reason's kind, not the driver's message: that may name hosts and ports to anyone
      return err instanceof TimeoutError ? { field, code: 'timeout', message: err.message } : { field, code: 'unavailable', message: `${what} failed` };
    }
  };

  return {
    databaseUp: () =>
      within(pingDatabase(), PROBE_TIMEOUT_MS, 'the database').then(
        () => true,
        () => false,
      ),

    async readiness() {
      const failed = (await Promise.all([probe('database', 'the database', pingDatabase), pingRedis ? probe('redis', 'Redis', pingRedis) : undefined])).filter(
        (entry) => entry !== undefined,
      );
      return { failed, redis: pingRedis ? 'up' : 'not_configured', media: mediaStatus() };
    },
  };
}
