/**
 * Generated hostile input for the signaling socket (issue 8): frames derived from every command of
 * spec/asyncapi.yaml, in every namespace the room runs (control, echo, moderation, timer, chat), valid and
 * mutated, in text and binary frames, JSON that is no frame and bytes that are no UTF-8, at the
 * size limits and one byte beyond, nested thousands of levels deep
 * (test/support/hostile/signaling-frames.ts).
 *
 * A storm of them hits one room from four sockets: the owner (a moderator), a guest, a registered
 * user invited to the room's event, and a socket of the owner that has not joined (until a
 * generated `join` comes). After every frame the sender's answer is read up to an echo probe:
 * a malformed frame gets exactly the `control` `error` the contract names for it and the socket
 * stays open; a frame over the hard limit closes the socket with 1009; a valid command gets
 * whatever its module answers, never `internal_error`. Every frame any socket receives matches the
 * contract (the test client checks each). A socket closes only as the contract says (1000 after
 * `kicked`, `banned` or `session_ended`; 1009; 1007 for a text frame that is no UTF-8) and is then
 * opened anew (a banned user is replaced by another invitee).
 *
 * After the storm the room is intact: a participant joining sees exactly the sockets that are in
 * the room, and once everyone has left, a newcomer finds it empty (and, on Redis, no key of the
 * room is left).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';

import { propertyRuns } from '../support/hostile/runs.js';
import { contractCommands, expectedAnswer, Frame, hostileFrames, type Expected } from '../support/hostile/signaling-frames.js';
import type { ServerFrame, SignalingClient, Starter } from '../support/signaling-client.js';
import { insertInvite } from '../support/invites.js';
import { roomKeysLeft, useSignalingRooms } from '../support/signaling-rooms.js';
import { redisUrl } from '../support/signaling.js';

const { runs, parameters } = propertyRuns(10_000);

/** How a socket stands in the room, as its own frames tell. */
type SlotState = 'connected' | 'joined' | 'waiting' | 'accepted' | 'removed';

interface Slot {
  name: string;
  /** How the socket is (re)opened. */
  starter: () => Promise<Starter>;
  /** Whether it sends `join` when (re)opened. */
  joins: boolean;
  client: SignalingClient;
  /** Frames of `client.received` already read into `state`. */
  read: number;
  state: SlotState;
  id?: string;
}

const REMOVALS = new Set(['kicked', 'banned', 'session_ended']);

/** The subject of a user's access token, to mint it anew. */
const subjectOf = (starter: Starter): string => {
  if (!('token' in starter)) throw new Error('not a user start');
  return JSON.parse(Buffer.from(starter.token.split('.')[1]!, 'base64url').toString()).sub as string;
};

describe('hostile signaling frames', () => {
  // the storm reopens the same participants' sockets thousands of times (the ticket caps have tests of their own)
  const { app, room, open } = useSignalingRooms({}, { tickets_per_user: 1_000_000, tickets_per_invite_code: 1_000_000 });
  const { document, commands } = contractCommands();

  it(
    `answer each frame as the contract says, close sockets only as it says, and leave the room intact (${runs} frames)`,
    async () => {
      const started = Date.now();
      const { roomId, owner, guest, invitee } = await room();
      // a fresh token at each start: a long run (FC_RUNS) outlives the 5 minutes of one
      const moderator = async (): Promise<Starter> => ({ roomId, token: await app.issuer.accessToken({ sub: `sub-${owner.name}` }) });
      // the invited user, until a ban: then another one
      let invited = subjectOf(await invitee('user'));
      const user = async (): Promise<Starter> => ({ roomId, token: await app.issuer.accessToken({ sub: invited }) });
      // the guest, until a ban deactivates its invite code: then a guest with a new code of the room
      let guestStart = guest;
      const knownIds = new Set<string>();
      /** The room's modules, from its tariff in `join_success`; a namespace of the contract outside it is `invalid_namespace`. */
      let modules: ReadonlySet<string> = new Set();
      const outcomes = new Map<string, number>();
      let probes = 0;

      /** Reads the frames the socket got since last time: its state, and the participant and timer ids it learns. */
      function readFrames(slot: Slot): void {
        for (const frame of slot.client.received.slice(slot.read)) {
          const payload = frame.payload as Record<string, any>;
          const message = `${frame.namespace}.${payload.message}`;
          if (message === 'control.join_success') {
            slot.state = 'joined';
            slot.id = payload.id;
            modules = new Set(payload.tariff.enabled_modules);
            for (const p of payload.participants ?? []) knownIds.add(p.id);
          } else if (message === 'moderation.in_waiting_room' || message === 'moderation.sent_to_waiting_room') slot.state = 'waiting';
          else if (message === 'moderation.accepted') slot.state = 'accepted';
          else if (frame.namespace === 'moderation' && REMOVALS.has(payload.message)) slot.state = 'removed';
          if (message === 'control.joined' || message === 'moderation.joined_waiting_room') knownIds.add(payload.id);
          if (message === 'timer.started') knownIds.add(payload.timer_id);
        }
        slot.read = slot.client.received.length;
        if (slot.id) knownIds.add(slot.id);
      }

      async function openSlot(name: string, starter: () => Promise<Starter>, joins: boolean): Promise<Slot> {
        const client = await open(await starter());
        const slot: Slot = { name, starter, joins, client, read: 0, state: 'connected' };
        if (joins) {
          client.command('control', 'join', { display_name: name });
          await roundTrip(slot);
        }
        return slot;
      }

      /** An echo probe there and back: every frame the server sent before its reply has arrived and been read. */
      async function roundTrip(slot: Slot, timeoutMs = 10_000): Promise<ServerFrame[] | undefined> {
        const n = ++probes;
        const from = slot.client.received.length;
        slot.client.inbox.length = 0;
        slot.client.command('echo', 'hostile-probe', { n });
        for (;;) {
          let frame: ServerFrame;
          try {
            frame = await slot.client.next('echo', undefined, timeoutMs);
          } catch (err) {
            if (slot.client.connection.failure) throw slot.client.connection.failure;
            if (slot.client.ws.readyState === slot.client.ws.OPEN) throw err;
            readFrames(slot);
            return undefined; // closed: the caller tells whether it should have
          }
          if (frame.payload.action === 'hostile-probe' && frame.payload.n === n) {
            const answered = slot.client.received.slice(from, slot.client.received.indexOf(frame));
            readFrames(slot);
            return answered;
          }
        }
      }

      /** A socket that closed, or was removed and is closing, must close as the contract says; it is then opened anew. */
      async function reopenIfClosed(slot: Slot, expectedClose?: number): Promise<Slot> {
        if (slot.state !== 'removed' && slot.client.ws.readyState === slot.client.ws.OPEN) return slot;
        const closed = await slot.client.closed;
        readFrames(slot);
        const last = slot.client.received.at(-1)?.payload?.message as string | undefined;
        if (expectedClose !== undefined) expect(closed.code, `${slot.name} closed`).toBe(expectedClose);
        else {
          expect(closed.code, `${slot.name} closed with ${closed.code} after ${JSON.stringify(slot.client.received.at(-1))}`).toBe(1000);
          expect(REMOVALS.has(last ?? ''), `${slot.name} closed with 1000 after ${JSON.stringify(slot.client.received.at(-1))}`).toBe(true);
        }
        // a banned user cannot come back: another invitee takes the place
        if (last === 'banned' && slot.name === 'user') invited = subjectOf(await invitee('user'));
        if (last === 'banned' && slot.name === 'guest') guestStart = { roomId, inviteCode: await insertInvite(app, roomId, owner) };
        return openSlot(slot.name, slot.starter, slot.joins);
      }

      function expectAnswer(slot: Slot, frame: Frame, expected: Expected, answered: ServerFrame[]): void {
        const errors = answered.filter((f) => f.payload?.message === 'error');
        const context = `${slot.name} (${slot.state}) sent ${fc.stringify(frame)}; got ${JSON.stringify(answered).slice(0, 1500)}`;
        if ('error' in expected) {
          expect(
            errors.map((f) => [f.namespace, f.payload.error]),
            context,
          ).toEqual([['control', expected.error]]);
        } else {
          expect(errors.length, context).toBeLessThanOrEqual(1);
          expect(
            errors.map((f) => f.payload.error),
            context,
          ).not.toContain('internal_error');
        }
      }

      let slots: Slot[] = [
        await openSlot('owner', moderator, true),
        await openSlot('guest', async () => guestStart, true),
        await openSlot('user', user, true),
        await openSlot('unjoined', moderator, false),
      ];

      /** Every socket's frames read, each open, each closed one as the contract says and opened anew. */
      async function settle(sender?: Slot, expectedClose?: number): Promise<void> {
        slots = await Promise.all(
          slots.map(async (slot) => {
            if (slot.client.ws.readyState === slot.client.ws.OPEN) await roundTrip(slot);
            if (slot.client.connection.failure) throw slot.client.connection.failure;
            return reopenIfClosed(slot, slot === sender ? expectedClose : undefined);
          }),
        );
      }

      const limits = { soft: app.config.signaling.max_message_bytes, hard: app.config.signaling.max_frame_bytes };
      // the commands of the room's modules: a namespace of the contract it does not run (media, until its
      // module is built) would only be answered invalid_namespace, which test/integration/signaling/frames.test.ts checks
      const running = commands.filter((command) => modules.has(command.namespace));
      expect(running.length).toBeGreaterThan(0);
      const frames = hostileFrames({ document, limits, commands: running, knownIds: () => [...knownIds] });
      const senders = fc.oneof(
        { weight: 5, arbitrary: fc.constant(0) },
        { weight: 2, arbitrary: fc.constant(1) },
        { weight: 2, arbitrary: fc.constant(2) },
        { weight: 1, arbitrary: fc.constant(3) },
      );

      await fc.assert(
        fc.asyncProperty(senders, frames, async (index, frame) => {
          const slot = slots[index]!;
          const expected = expectedAnswer(frame, slot.state === 'joined', limits, modules);
          const outcome = 'close' in expected ? `close ${expected.close}` : 'error' in expected ? expected.error : 'module';
          outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
          slot.client.ws.send(frame.data, { binary: frame.binary });
          if ('close' in expected) {
            const closed = await slot.client.closed;
            expect(closed.code, `${slot.name} sent ${fc.stringify(frame)}`).toBe(expected.close);
            return settle(slot, expected.close);
          }
          const answered = await roundTrip(slot);
          if (answered) expectAnswer(slot, frame, expected, answered);
          else expect('module' in expected, `${slot.name} was closed after ${fc.stringify(frame)}`).toBe(true);
          await settle();
        }),
        parameters,
      );

      // the room is intact: a newcomer sees exactly the sockets in the room
      const inRoom = slots.filter((slot) => slot.state === 'joined').map((slot) => slot.id);
      const newcomer = await openSlot('newcomer', moderator, true);
      expect(newcomer.state).toBe('joined');
      const joinSuccess = newcomer.client.received.find((f) => f.payload?.message === 'join_success')!;
      expect(joinSuccess.payload.participants.map((p: { id: string }) => p.id).sort()).toEqual(inRoom.sort());

      // and once everyone has left, empty
      await Promise.all([...slots, newcomer].map((slot) => slot.client.close()));
      if (redisUrl) expect(await roomKeysLeft(roomId)).toEqual([]);
      const last = await openSlot('last', moderator, true);
      expect(last.client.received.find((f) => f.payload?.message === 'join_success')!.payload.participants).toEqual([]);
      await last.client.close();

      const tally = [...outcomes].map(([outcome, count]) => `${outcome}×${count}`).join(' ');
      console.info(`signaling-hostile: ${runs} frames in ${((Date.now() - started) / 1000).toFixed(1)} s: ${tally}`);
    },
    Math.max(300_000, runs * 30),
  );
});
