/**
 * Operations of the contract whose issue has not landed yet. They answer 501 with the error body,
 * and the README's status table lists them (a test keeps the two in step).
 */
import type { OperationId } from '../../../generated/operations.js';
import { errors } from '../errors.js';
import type { Handlers } from '../handler-types.js';

export const NOT_YET_IMPLEMENTED = {
  get_turn_servers: 4,
  get_rooms: 4,
  create_room: 4,
  get_room: 4,
  patch_room: 4,
  delete_room: 4,
  get_room_tariff: 4,
  get_room_event: 4,
  start_room: 4,
  start_invited_room: 4,
  start_call_in: 4,
  get_room_invites: 4,
  create_room_invite: 4,
  get_room_invite: 4,
  update_room_invite: 4,
  delete_room_invite: 4,
  verify_invite_code: 4,
  get_room_sip_config: 4,
  put_room_sip_config: 4,
  delete_room_sip_config: 4,
  get_room_assets: 4,
  create_room_asset: 4,
  get_room_asset: 4,
  delete_room_asset: 4,
  get_room_streaming_targets: 4,
  create_room_streaming_target: 4,
  get_room_streaming_target: 4,
  patch_room_streaming_target: 4,
  delete_room_streaming_target: 4,
  get_events: 5,
  create_event: 5,
  get_event: 5,
  patch_event: 5,
  delete_event: 5,
  get_event_instances: 5,
  get_event_instance: 5,
  patch_event_instance: 5,
  add_event_to_favorites: 5,
  remove_event_from_favorites: 5,
  create_event_invite: 5,
  get_event_invites: 5,
  update_event_invite: 5,
  delete_event_invite: 5,
  delete_email_event_invite: 5,
  accept_event_invite: 5,
  decline_event_invite: 5,
} as const satisfies Partial<Record<OperationId, number>>;

type NotYet = keyof typeof NOT_YET_IMPLEMENTED;

export const notYetImplementedHandlers = Object.fromEntries(
  Object.keys(NOT_YET_IMPLEMENTED).map((id) => [
    id,
    async () => {
      throw errors.notImplemented(id);
    },
  ]),
) as unknown as Handlers<NotYet>;
