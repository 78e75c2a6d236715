/**
 * A problem the operator fixes (a wrong argument, a missing user, a busy port): the command prints
 * `convene: <message>` and exits with `exitCode`, without a stack trace.
 */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** Wrong arguments: exit code 2, as for a configuration the service refuses. */
export const usageError = (message: string): CliError => new CliError(message, 2);
