/**
 * `convene dev-token <name>`: prints tokens of the embedded development identity provider, for
 * calling the API by hand:
 *
 *   convene dev-token alice                       # JSON: id_token, access_token, expires_at, …
 *   convene dev-token alice --field access_token  # just that token, for $(…) in a shell
 *   convene dev-token gateway --service           # a call-in service-account access token
 *   convene dev-token alice --lifetime 600        # seconds (default 3600)
 *   convene dev-token alice --group /dev --group /ops   # the user's groups (x_grp), for the chat
 *
 * It reads the same configuration as the service and signs with its key file
 * (`<data_dir>/dev-idp-key.json`), so the running service accepts the tokens. It refuses when an
 * OIDC issuer is configured or NODE_ENV=production.
 */
import { parseArgs } from 'node:util';
import type { Config } from '../config/schema.js';
import { mintDevTokens } from '../domain/identity/dev-token.js';
import { usageError } from './errors.js';

export const devTokenUsage = 'convene dev-token <name> [--service] [--lifetime <seconds>] [--group <name>]… [--field id_token|access_token]';

export function parseDevTokenArgs(args: string[]) {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: {
      service: { type: 'boolean', default: false },
      lifetime: { type: 'string', default: '3600' },
      group: { type: 'string', multiple: true },
      field: { type: 'string' },
    },
  });
  if (positionals.length !== 1) throw usageError(`usage: ${devTokenUsage}`);
  return { name: positionals[0]!, ...values };
}

export async function devToken(config: Config, args: ReturnType<typeof parseDevTokenArgs>): Promise<void> {
  const output = await mintDevTokens(config, {
    name: args.name,
    service: args.service,
    lifetimeSeconds: Number(args.lifetime),
    ...(args.group ? { groups: args.group } : {}),
  });
  if (args.field === undefined) {
    console.log(JSON.stringify(output, null, 2));
    return;
  }
  const field = output[args.field as keyof typeof output];
  if (typeof field !== 'string') {
    const names = Object.entries(output)
      .filter(([, value]) => typeof value === 'string')
      .map(([name]) => name);
    throw usageError(`--field must be one of ${names.join(', ')}`);
  }
  console.log(field);
}
