/**
 * The `chat` namespace (the reference controller and its web app): messages to the whole
 * room, to one of its groups or to one participant, each scope's history and the participant's
 * last-seen timestamps in `join_success`, and moderators switching the chat off and on and clearing
 * the room's history.
 *
 * The chat lives in the chat store (Redis with many instances), never in a hub, so a joiner on any
 * instance is shown the same histories and one moderator's switch holds for every instance. Each
 * message is published to the whole room; `withholds` keeps a group message from the participants
 * outside its group and a private one from all but its two participants, on whichever instance
 * they are. A participant's groups are its user's at the last login (`x_grp`, read with the room
 * context); guests and callers have none. Whether a private message's target is in the room is the
 * room's membership (the control module) to say, which drops a leaver before anyone is told it left.
 *
 * What was said is forgotten when the room empties. (One joining at the very moment the last one
 * leaves may see the history of the session that ends, and lose what it says in those few
 * milliseconds: the membership says the room emptied, and the chat goes.)
 *
 * Who may send what: `send_message` and `set_last_seen_timestamp` — anyone in the room;
 * `enable_chat`, `disable_chat` and `clear_history` — moderators only (else
 * `insufficient_permissions`). Errors go to the sender only: `empty_message`,
 * `max_characters_exceeded`, `invalid_target`, `chat_disabled` (moderators included, as in the
 * reference).
 */
import { randomUUID } from 'node:crypto';
import type {
  ChatErrorEvent,
  ChatJoinData,
  ChatMessageSentEvent,
  ChatSendMessageCommand,
  ChatSetLastSeenTimestampCommand,
} from '../../../../generated/signaling/types.js';
import type { RoomMessage } from '../../bus/signaling-bus.js';
import type { RoomHub } from '../../room-hub.js';
import type { Session } from '../../session.js';
import type { CommandPayload, ControlModule, ModuleDeps, SignalingModule } from '../module.js';
import type { ChatState, ChatStore, ScopeRef, StoredMessage } from './chat-store.js';
import { sendError } from '../../errors.js';
import { codePointLength } from '../../../domain/code-points.js';

const NAMESPACE = 'chat';

/** The longest message, in Unicode code points: the reference's limit (it counted bytes, and cut instead of refusing). */
export const MAX_CHARACTERS = 4096;
/**
 * How long after it was handled a message shown in a joiner's history may still be on its way to
 * that joiner as `message_sent` (through Redis): publishing follows storing within milliseconds.
 */
const IN_FLIGHT_MS = 5_000;

type ChatError = ChatErrorEvent['payload']['error'];
type Sent = ChatMessageSentEvent['payload'];
type ScopedCommand = Pick<ChatSendMessageCommand['payload'], 'scope' | 'target'>;
type Notice = 'chat_enabled' | 'chat_disabled' | 'history_cleared';

/** What the module's functions work with. */
interface ChatParts {
  deps: ModuleDeps;
  store: ChatStore;
  /** Per joiner: the recent messages its history showed, whose `message_sent` it must not get again. */
  shownAtJoin: WeakMap<Session, Set<string>>;
}

export function createChatModule(deps: ModuleDeps): SignalingModule {
  const store = deps.stores.chat;
  const parts: ChatParts = { deps, store, shownAtJoin: new WeakMap() };
  return {
    namespace: NAMESPACE,
    handleCommand: (session, command, hub) => handleCommand(parts, session, command, hub),
    joinData: (session) => joinData(parts, session),
    async participantLeft(_session, hub, { roomEmpty }) {
      if (roomEmpty) await store.forget(hub.roomId);
    },
    withholds: (session, message) => withholds(parts, session, message),
  };
}

const fail = (session: Session, error: ChatError) => sendError(session, NAMESPACE, error);
const groupsOf = (session: Session): readonly string[] => session.participant.groups ?? [];

/** Whether the participant is in the room now, on any instance. */
async function inRoom(deps: ModuleDeps, roomId: string, participantId: string): Promise<boolean> {
  return (await (deps.modules().get('control') as ControlModule).member(roomId, participantId)) !== undefined;
}

async function handleCommand(parts: ChatParts, session: Session, command: CommandPayload, hub: RoomHub): Promise<void> {
  const { store } = parts;
  switch (command.action) {
    case 'send_message':
      return sendMessage(parts, session, command as ChatSendMessageCommand['payload'], hub);
    case 'set_last_seen_timestamp':
      return setLastSeen(parts, session, command as ChatSetLastSeenTimestampCommand['payload'], hub);
    case 'enable_chat':
      return moderate(session, hub, () => store.setEnabled(hub.roomId, true), 'chat_enabled');
    case 'disable_chat':
      return moderate(session, hub, () => store.setEnabled(hub.roomId, false), 'chat_disabled');
    case 'clear_history':
      return moderate(session, hub, () => store.clearRoomHistory(hub.roomId), 'history_cleared');
    default:
      throw new Error(`chat has no command ${command.action}`);
  }
}

/** The scope a command names, if the sender may use it: one of its groups, or another participant. */
function scopeOf(session: Session, { scope, target }: ScopedCommand): ScopeRef | undefined {
  if (scope === 'global') return { scope };
  // the schema requires a target for these scopes (and a uuid for a private one)
  if (scope === 'group') return groupsOf(session).includes(target!) ? { scope, target: target! } : undefined;
  return target !== session.participant.id ? { scope, target: target! } : undefined;
}

async function sendMessage({ deps, store }: ChatParts, session: Session, command: ChatSendMessageCommand['payload'], hub: RoomHub): Promise<void> {
  const { content } = command;
  if (content.trim() === '') return fail(session, 'empty_message');
  if (codePointLength(content) > MAX_CHARACTERS) return fail(session, 'max_characters_exceeded');
  const scope = scopeOf(session, command);
  if (!scope) return fail(session, 'invalid_target');
  if (scope.scope === 'private' && !(await inRoom(deps, hub.roomId, scope.target))) return fail(session, 'invalid_target');
  const message: StoredMessage = {
    id: randomUUID(),
    source: session.participant.id,
    content,
    ...scope,
    timestamp: new Date(deps.scheduler.now()).toISOString(),
  };
  if ((await store.post(hub.roomId, message)) === 'chat_disabled') return fail(session, 'chat_disabled');
  const { timestamp: _, ...fields } = message;
  await hub.publish({ namespace: NAMESPACE, payload: { message: 'message_sent', ...fields }, audience: { to: 'room' } });
}

async function setLastSeen({ deps, store }: ChatParts, session: Session, command: ChatSetLastSeenTimestampCommand['payload'], hub: RoomHub): Promise<void> {
  const { id } = session.participant;
  const scope = scopeOf(session, command);
  // a private chat's: with one in the room, or one it exchanged messages with (who may have left)
  const readable =
    scope !== undefined &&
    (scope.scope !== 'private' || (await inRoom(deps, hub.roomId, scope.target)) || (await store.isCorrespondent(hub.roomId, id, scope.target)));
  if (!readable) return fail(session, 'invalid_target');
  await store.setLastSeen(hub.roomId, id, scope, command.timestamp);
}

/** A moderator's command: its change, then everyone is told who made it. */
async function moderate(session: Session, hub: RoomHub, change: () => Promise<void>, notice: Notice): Promise<void> {
  if (session.role !== 'moderator') return fail(session, 'insufficient_permissions');
  await change();
  await hub.publish({ namespace: NAMESPACE, payload: { message: notice, issued_by: session.participant.id }, audience: { to: 'room' } });
}

async function joinData(parts: ChatParts, session: Session): Promise<ChatJoinData> {
  const state = await parts.store.join(session.room.roomId, session.participant.id, groupsOf(session));
  rememberShown(parts, session, state);
  return {
    enabled: state.enabled,
    room_history: state.room,
    groups_history: state.groups,
    private_history: state.private,
    last_seen_timestamp_global: state.lastSeen.global ?? null,
    last_seen_timestamps_group: state.lastSeen.groups,
    last_seen_timestamps_private: state.lastSeen.private,
  };
}

/** Remembers the messages of the joiner's histories that may still reach it as events. */
function rememberShown({ deps, shownAtJoin }: ChatParts, session: Session, state: ChatState): void {
  const since = deps.scheduler.now() - IN_FLIGHT_MS;
  const histories = [state.room, ...state.groups.map((group) => group.history), ...state.private.map((chat) => chat.history)];
  const recent = new Set(
    histories
      .flat()
      .filter((message) => Date.parse(message.timestamp) >= since)
      .map((message) => message.id),
  );
  if (recent.size === 0) return;
  shownAtJoin.set(session, recent);
  // housekeeping on the real clock: it frees memory and decides nothing
  setTimeout(() => {
    if (shownAtJoin.get(session) === recent) shownAtJoin.delete(session);
  }, IN_FLIGHT_MS).unref();
}

function withholds({ shownAtJoin }: ChatParts, session: Session, message: RoomMessage): boolean {
  const payload = message.payload as Sent;
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- defensive: the cast types the payload, it does not check what arrives
  if (payload.message !== 'message_sent') return false;
  // its history showed it already: the one event of it is dropped
  if (shownAtJoin.get(session)?.delete(payload.id)) return true;
  return !hears(session, payload);
}

/** Whether the session is in the audience of a message's scope. */
function hears(session: Session, { scope, source, target }: Sent): boolean {
  if (scope === 'group') return groupsOf(session).includes(target!);
  if (scope === 'private') return session.participant.id === source || session.participant.id === target;
  return true;
}
