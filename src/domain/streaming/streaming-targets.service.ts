/**
 * A room's streaming targets (the contract). The room's owner and the
 * invitees of its event may read them, only the owner may change them (others get 404, as for the
 * room itself), and `streaming_key` — the secret that lets anyone publish to the stream — is shown
 * to the owner only.
 */
import type { components } from '../../../generated/openapi.js';
import type { Db, StreamingTargetPatch, StreamingTargetRow } from '../../db/schema.js';
import { errors } from '../../errors.js';
import { requireRoomAccess, requireRoomOwner } from '../rooms/room-access.js';
import type { Page, PageRequest } from '../paging.js';
import { absoluteUriFailures, checkAbsoluteUris } from './absolute-uri.js';
import * as repository from './streaming-targets.repository.js';

export type StreamingTarget = components['schemas']['StreamingTarget'];
export type StreamingTargetCreate = components['schemas']['StreamingTargetCreate'];
export type StreamingTargetChanges = components['schemas']['StreamingTargetPatch'];

export interface StreamingTargetService {
  list(userId: string, roomId: string, page: PageRequest): Promise<Page<StreamingTarget>>;
  create(userId: string, roomId: string, body: StreamingTargetCreate): Promise<StreamingTarget>;
  get(userId: string, roomId: string, id: string): Promise<StreamingTarget>;
  patch(userId: string, roomId: string, id: string, body: StreamingTargetChanges): Promise<StreamingTarget>;
  delete(userId: string, roomId: string, id: string): Promise<void>;
}

const URI_FIELDS = ['streaming_endpoint', 'public_url'] as const;

export function createStreamingTargetService(db: Db): StreamingTargetService {
  return {
    async list(userId, roomId, page) {
      const access = await requireRoomAccess(db, userId, roomId);
      const { total, rows } = await repository.pageOfRoom(db, roomId, page);
      return { total, items: rows.map((row) => present(row, access.kind === 'owner')) };
    },

    async create(userId, roomId, body) {
      await requireRoomOwner(db, userId, roomId);
      checkAbsoluteUris(body, URI_FIELDS);
      const row = await repository.insert(db, {
        room_id: roomId,
        name: body.name,
        kind: body.kind,
        streaming_endpoint: body.streaming_endpoint,
        streaming_key: body.streaming_key,
        public_url: body.public_url,
      });
      return present(row, true);
    },

    async get(userId, roomId, id) {
      const access = await requireRoomAccess(db, userId, roomId);
      const row = await repository.findInRoom(db, roomId, id);
      if (!row) throw errors.notFound();
      return present(row, access.kind === 'owner');
    },

    async patch(userId, roomId, id, body) {
      await requireRoomOwner(db, userId, roomId);
      const changes = knownChanges(body);
      checkAbsoluteUris(changes, URI_FIELDS);
      const row = await repository.updateInRoom(db, roomId, id, changes);
      if (!row) throw errors.notFound();
      return present(row, true);
    },

    async delete(userId, roomId, id) {
      await requireRoomOwner(db, userId, roomId);
      if (!(await repository.deleteInRoom(db, roomId, id))) throw errors.notFound();
    },
  };
}

/**
 * Sets the room's streaming targets to `targets` (an event's `streaming_targets`: created with the
 * event, replaced as a whole by its update), each checked as `create` checks one; `field` names the
 * list in errors. Run it in the transaction of the event's change, after the room is known.
 */
export async function replaceRoomStreamingTargets(trx: Db, roomId: string, targets: readonly StreamingTargetCreate[], field: string) {
  const failures = targets.flatMap((target, i) => absoluteUriFailures(target, URI_FIELDS, `${field}.${i}.`));
  if (failures.length > 0) throw errors.validationFailed(failures);
  await repository.replaceOfRoom(
    trx,
    roomId,
    // only the fields of a target: clients send back what they read, ids included
    targets.map(({ name, kind, streaming_endpoint, streaming_key, public_url }) => ({ name, kind, streaming_endpoint, streaming_key, public_url })),
  );
}

/** The fields the patch changes (a body of unknown fields only is refused by the HTTP edge). */
function knownChanges(body: StreamingTargetChanges): StreamingTargetPatch {
  const changes: StreamingTargetPatch = {};
  if (body.name !== undefined) changes.name = body.name;
  if (body.kind !== undefined) changes.kind = body.kind;
  if (body.streaming_endpoint !== undefined) changes.streaming_endpoint = body.streaming_endpoint;
  if (body.streaming_key !== undefined) changes.streaming_key = body.streaming_key;
  if (body.public_url !== undefined) changes.public_url = body.public_url;
  return changes;
}

function present(row: StreamingTargetRow, showKey: boolean): StreamingTarget {
  const target: StreamingTarget = {
    id: row.id,
    name: row.name,
    kind: row.kind,
    streaming_endpoint: row.streaming_endpoint,
    public_url: row.public_url,
  };
  if (showKey) target.streaming_key = row.streaming_key;
  return target;
}
