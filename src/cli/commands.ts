/**
 * The `convene` command's subcommands (bin/convene.js runs them; `npm start` is `convene serve`). Every subcommand reads
 * the service's configuration (convene.toml or CONVENE_CONFIG, CONVENE_* and the shortcuts such as
 * DATABASE_URL), so it works on the database the service uses. Exit codes: 0 done, 1 failed,
 * 2 refused (usage, configuration, a data directory in use, a busy port).
 */
import { ConfigError, loadConfig } from '../config/load.js';
import type { Config } from '../config/schema.js';
import { DataDirLockedError } from '../db/connect.js';
import { IdentityConfigurationError } from '../domain/identity/identity-config.js';
import { webhooksCommand, webhooksUsage } from './webhooks.js';
import { cleanupCommand, cleanupUsage, tariffsCommand, tariffsUsage, usersCommand, usersUsage } from './admin.js';
import { checkConfig } from './check-config.js';
import { devToken, devTokenUsage, parseDevTokenArgs } from './dev-token.js';
import { CliError, usageError } from './errors.js';
import { migrate } from './migrate.js';
import { PortUnavailableError } from './port.js';
import { serve } from './serve.js';

interface Command {
  usage: string;
  summary: string;
  run(args: string[], config: () => Config): Promise<void> | void;
}

const noArguments = (name: string, args: string[]) => {
  if (args.length > 0) throw usageError(`${name} takes no arguments`);
};

const commands: Record<string, Command> = {
  serve: {
    usage: 'convene serve',
    summary: 'runs the service until SIGTERM or SIGINT (migrates the database first)',
    run: (args, config) => (noArguments('serve', args), serve(config())),
  },
  migrate: {
    usage: 'convene migrate',
    summary: 'applies pending database migrations, then exits',
    run: (args, config) => (noArguments('migrate', args), migrate(config())),
  },
  'check-config': {
    usage: 'convene check-config',
    summary: 'validates the configuration without touching the database',
    run: (args, config) => (noArguments('check-config', args), checkConfig(config())),
  },
  'dev-token': {
    usage: devTokenUsage,
    summary: 'prints tokens of the development identity provider',
    run: (args, config) => {
      const parsed = parseDevTokenArgs(args); // usage errors before the configuration's
      return devToken(config(), parsed);
    },
  },
  tariffs: {
    usage: tariffsUsage,
    summary: 'lists, creates and assigns tariffs (running instances serve a created one within a minute)',
    run: (args, config) => tariffsCommand(config, args),
  },
  users: {
    usage: usersUsage,
    summary: 'lists users; disables or enables one (logins and access tokens refused, data kept)',
    run: (args, config) => usersCommand(config, args),
  },
  webhooks: {
    usage: webhooksUsage,
    summary: "the operator's webhook subscriptions (events of every room and meeting): list, add, remove, resume, deliveries",
    run: (args, config) => webhooksCommand(config, args),
  },
  cleanup: {
    usage: cleanupUsage,
    summary: `deletes ad-hoc events (and rooms) older than the retention (24 h) and expired invite codes; --dry-run lists them`,
    run: (args, config) => cleanupCommand(config, args),
  },
};

function usage(): string {
  const lines = Object.values(commands).map((command) => `  ${command.usage}\n      ${command.summary}`);
  return `usage: convene <command> [arguments]\n\n${lines.join('\n')}\n\nConfiguration: convene.toml (or CONVENE_CONFIG), CONVENE_<SECTION>__<KEY>, PORT, DATABASE_URL, REDIS_URL, OIDC_ISSUER.`;
}

/** Problems the operator fixes: one line each, no stack trace. */
function refusal(err: unknown): { message: string; code: number } | undefined {
  if (err instanceof ConfigError) return { message: err.message, code: 2 };
  if (err instanceof CliError) return { message: `convene: ${err.message}`, code: err.exitCode };
  if (err instanceof DataDirLockedError || err instanceof IdentityConfigurationError || err instanceof PortUnavailableError) {
    return { message: `convene: ${err.message}`, code: 2 };
  }
  if (err instanceof TypeError && (err as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS')) {
    return { message: `convene: ${err.message}`, code: 2 };
  }
  return undefined;
}

async function dispatch(argv: string[]): Promise<void> {
  const [name, ...args] = argv;
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    (name === undefined ? console.error : console.log)(usage());
    if (name === undefined) process.exitCode = 2;
    return;
  }
  const command = commands[name];
  if (!command) throw usageError(`unknown command "${name}"\n${usage()}`);
  if (args.includes('--help') || args.includes('-h')) {
    console.log(`usage: ${command.usage}\n${command.summary}`);
    return;
  }
  let config: Config | undefined;
  await command.run(args, () => (config ??= loadConfig()));
}

/** Runs one command line (without `node` and the script); a failure ends the process with its exit code. */
export function runCli(argv: string[]): Promise<void> {
  return dispatch(argv).catch((err: unknown) => {
    const known = refusal(err);
    if (known) {
      console.error(known.message);
      process.exit(known.code);
    }
    // a failure nobody foresaw: the stack helps whoever reports it
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  });
}
