/**
 * Whether the service's port can be listened on, asked before anything is opened or written: a
 * second `convene serve` on a busy port must not create or migrate `./data` (nor wait for a data
 * directory lock it would never need) only to die on EADDRINUSE afterwards.
 */
import { createServer } from 'node:net';

/** The port is taken, or this process may not listen on it; `message` is one line for the operator. */
export class PortUnavailableError extends Error {
  constructor(
    readonly port: number,
    readonly host: string,
    readonly code: string,
  ) {
    const reason =
      code === 'EADDRINUSE'
        ? 'is already in use (is Convene already running?); stop that process or set [http] port (PORT)'
        : code === 'EACCES'
          ? 'needs privileges this process does not have; use a port above 1023 or set [http] port (PORT)'
          : code === 'EADDRNOTAVAIL'
            ? 'is on an address this machine does not have; set [http] host'
            : `cannot be listened on (${code})`;
    super(`port ${port} (on ${host}) ${reason}`);
    this.name = 'PortUnavailableError';
  }
}

/**
 * Listens on `port` for a moment and closes again; rejects with PortUnavailableError when that fails.
 * Port 0 (the system picks one) is always available.
 */
export function ensurePortAvailable(port: number, host: string): Promise<void> {
  if (port === 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => reject(new PortUnavailableError(port, host, err.code ?? err.message)));
    probe.listen({ port, host, exclusive: true }, () => probe.close(() => resolve()));
  });
}

/** The same error for a listen that failed (another process took the port between probe and listen). */
export function asPortUnavailable(err: unknown, port: number, host: string): PortUnavailableError | undefined {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const syscall = (err as NodeJS.ErrnoException | undefined)?.syscall;
  return syscall === 'listen' && typeof code === 'string' ? new PortUnavailableError(port, host, code) : undefined;
}
