/**
 * A secret every instance of the deployment shares: the first instance to ask stores a random one,
 * every later ask (on any instance, after any restart) reads the same value. `ON CONFLICT DO
 * NOTHING` makes concurrent first starts agree on one value.
 */
import { randomBytes } from 'node:crypto';
import type { Db } from './schema.js';

export async function sharedSecret(db: Db, name: string): Promise<string> {
  await db
    .insertInto('service_secrets')
    .values({ name, value: randomBytes(32).toString('base64url') })
    .onConflict((oc) => oc.column('name').doNothing())
    .execute();
  const row = await db.selectFrom('service_secrets').select('value').where('name', '=', name).executeTakeFirstOrThrow();
  return row.value;
}
