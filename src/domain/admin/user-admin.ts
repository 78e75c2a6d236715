/**
 * The operator's users (`convene users …`): list them, and disable or enable one. A disabled user's
 * logins are refused (400 `invalid_id_token`) and so are their access tokens (401 `unauthorized`,
 * on each instance within the 2 s its authenticated-user cache keeps a user); their rooms, events and
 * invitations stay. Sockets they have open stay open until they leave.
 */
import type { Db, UserRow } from '../../db/schema.js';
import { UUID_PATTERN } from '../uuid.js';
import * as users from '../users/users.repository.js';
import { AdminError } from './admin-error.js';

export const listUsers = (db: Db): Promise<UserRow[]> => users.listAllUsers(db);

/** A user by id, or by e-mail address when that names exactly one. */
export async function findUser(db: Db, key: string): Promise<UserRow> {
  if (UUID_PATTERN.test(key)) {
    const user = await users.findUserById(db, key.toLowerCase());
    if (!user) throw new AdminError(`no user has the id ${key}`);
    return user;
  }
  if (!key.includes('@')) throw new AdminError(`"${key}" is neither a user id nor an e-mail address`);
  const found = await users.findUsersByEmail(db, [key]);
  if (found.length === 0) throw new AdminError(`no user has the e-mail address ${key}`);
  if (found.length > 1)
    throw new AdminError(`${found.length} users have the e-mail address ${key}; name one by id: ${found.map((user) => user.id).join(', ')}`);
  return found[0]!;
}

/** Disables (or enables) the user; answers them as they were before. */
export async function setDisabled(db: Db, key: string, disabled: boolean): Promise<UserRow> {
  const user = await findUser(db, key);
  await users.setUserDisabled(db, user.id, disabled);
  return user;
}
