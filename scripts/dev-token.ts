/**
 * Prints tokens of the embedded development identity provider, for calling the API by hand:
 *
 *   npm run -s dev-token -- alice                      # JSON: id_token, access_token, expires_at, …
 *   npm run -s dev-token -- alice --field access_token # just that token, for $(…) in a shell
 *   npm run -s dev-token -- gateway --service          # a call-in service-account access token
 *   npm run -s dev-token -- alice --lifetime 600       # seconds (default 3600)
 *   npm run -s dev-token -- alice --group /dev --group /ops   # the user's groups (x_grp), for the chat
 *
 * It reads the same configuration as the service and signs with its key file
 * (`<data_dir>/dev-idp-key.json`), so the running service accepts the tokens. It refuses when an
 * OIDC issuer is configured or NODE_ENV=production.
 */
import { parseArgs } from 'node:util';

import { loadConfigOrExit } from '../src/config/load.js';
import { mintDevTokens } from '../src/domain/identity/dev-token.js';

const usage = 'usage: npm run dev-token -- <name> [--service] [--lifetime <seconds>] [--group <name>]… [--field id_token|access_token]';

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      service: { type: 'boolean', default: false },
      lifetime: { type: 'string', default: '3600' },
      group: { type: 'string', multiple: true },
      field: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help || positionals.length !== 1) {
    console.error(usage);
    process.exitCode = values.help ? 0 : 2;
    return;
  }
  const config = loadConfigOrExit();
  const output = await mintDevTokens(config, {
    name: positionals[0]!,
    service: values.service,
    lifetimeSeconds: Number(values.lifetime),
    ...(values.group ? { groups: values.group } : {}),
  });
  if (values.field === undefined) {
    console.log(JSON.stringify(output, null, 2));
    return;
  }
  const field = output[values.field as keyof typeof output];
  if (typeof field !== 'string') {
    const names = Object.entries(output).filter(([, value]) => typeof value === 'string').map(([name]) => name);
    throw new Error(`--field must be one of ${names.join(', ')}`);
  }
  console.log(field);
}

main().catch((error: unknown) => {
  console.error(`dev-token: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
});
