// The soak's signaling load: rooms of one moderator (the owner), stable guests who stay for a whole
// phase, and churning guests who leave and come back with a new ticket every few seconds. In each
// room the moderator runs timer after timer: countdowns that expire, stopwatches and countdowns it
// stops, some with the ready check, and runs it ends by leaving (`creator_left`, then it comes
// back); meanwhile participants chat, raise and lower hands, mark themselves ready, and provoke the
// refusals a guest's start and a second start get. Every frame is checked against the contract by
// the typed client (`validate: true`); any error frame nobody provoked, any socket closed by the
// server, is a problem.
//
// What every participant must have seen, checked frame by frame:
// - each session's own timeline is consistent: a `stopped` only for the timer it was told runs
//   (by `join_success` or `started`), and no `started` while another runs for it (its `stopped`
//   was lost); nothing runs for anyone at the end of a phase;
// - each stable guest got every `started` and `stopped` of its room exactly once, in order, with
//   the kind the run ended with, and every round's chat messages and ready statuses.
import WebSocket from 'ws';
import type { Middleware } from 'openapi-fetch';
import {
  createHttpClient,
  startSignaling,
  type CommandPayload,
  type ConveneHttpClient,
  type ServerEvent,
  type StartedSignaling,
} from '../../packages/client/src/index.js';
import { checkResponse, operationFor } from '../../test/support/contract.js';
import { Counter, freshSource, pause, pool, Problems, quiet, sleep, Tally } from './record.js';

/** How long any expected frame may take, under load on a shared machine. */
const WAIT_MS = 30_000;

export interface RoomSetup {
  roomId: string;
  ownerToken: string;
  inviteCode: string;
}

export interface SignalingFigures {
  /** Sessions opened (a churning guest's every return is one). */
  sessions: number;
  open: number;
  peakOpen: number;
  commands: number;
  frames: number;
  /** Frames by `namespace message`. */
  messages: Counter;
  /** Timer runs by `kind how-it-ended`. */
  runs: Counter;
  /** Error frames a command meant to provoke. */
  provoked: number;
  problems: Problems;
}

export function signalingFigures(problems: Problems): SignalingFigures {
  return { sessions: 0, open: 0, peakOpen: 0, commands: 0, frames: 0, messages: new Counter(), runs: new Counter(), provoked: 0, problems };
}

interface Context {
  url: string;
  figures: SignalingFigures;
  random: () => number;
  /** For guests' starts (`start_invited`, no token); answers checked against the contract. */
  guestHttp: ConveneHttpClient;
}

type Role = 'moderator' | 'stable' | 'churner';

/** Every start comes from the run's own address, and its answer is checked against the contract. */
const contractCheck: Middleware = {
  onRequest({ request }) {
    request.headers.set('x-forwarded-for', freshSource());
    return request;
  },
  async onResponse({ request, response, schemaPath }) {
    const body = await response.clone().text();
    checkResponse(operationFor(request.method, schemaPath), { status: response.status, contentType: response.headers.get('content-type'), body });
    return response;
  },
};

function checkedHttp(url: string, token?: string): ConveneHttpClient {
  const client = createHttpClient({ baseUrl: `${url}/v1`, ...(token ? { token } : {}) });
  client.use(contractCheck);
  return client;
}

class Session {
  /** The timer this participant was told runs (by `join_success` or `started`), until its `stopped`. */
  running: string | undefined;
  /** `started <id>` and `stopped <id> <kind>`, in arrival order. */
  readonly timeline: string[] = [];
  leaving = false;
  /** Errors this session provoked and waits for, by `namespace error`. */
  private readonly provoked = new Map<string, Array<() => void>>();

  constructor(
    readonly room: SoakRoom,
    readonly role: Role,
    readonly name: string,
    readonly connection: StartedSignaling,
  ) {}

  send: StartedSignaling['send'] = (namespace, payload) => {
    this.connection.send(namespace, payload);
    this.room.context.figures.commands++;
  };

  /** Sends a command meant to be refused with `error`; resolves when the refusal came. */
  provoke(namespace: 'timer', payload: CommandPayload<'timer'>, error: string): Promise<void> {
    const key = `${namespace} ${error}`;
    const arrived = quiet(
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${this.name} had no ${key} within ${WAIT_MS} ms`)), WAIT_MS);
        const waiting = this.provoked.get(key) ?? [];
        waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
        this.provoked.set(key, waiting);
      }),
    );
    this.send(namespace, payload);
    return arrived;
  }

  receive(frame: ServerEvent): void {
    const { figures } = this.room.context;
    figures.frames++;
    const payload = frame.payload as Record<string, any>;
    figures.messages.add(`${frame.namespace} ${payload.message}`);
    if (payload.message === 'error') return this.refused(`${frame.namespace} ${payload.error}`);
    if (frame.namespace === 'control' && payload.message === 'join_success') this.running = payload.timer?.timer_id;
    if (frame.namespace === 'timer' && payload.message === 'started') this.started(payload.timer_id);
    if (frame.namespace === 'timer' && payload.message === 'stopped') this.stopped(payload.timer_id, payload.kind);
    if (frame.namespace === 'timer' && payload.message === 'updated_ready_status') this.arrived(`ready ${payload.timer_id}`);
    // the rounds' messages; the churning guests' parting words are awaited by nobody
    if (frame.namespace === 'chat' && payload.message === 'message_sent' && payload.content.startsWith('Round ')) this.arrived(`chat ${payload.content}`);
  }

  private started(id: string): void {
    if (this.running !== undefined) this.problem(`got started ${id} while ${this.running} ran for it: that run's stopped never came`);
    this.running = id;
    this.timeline.push(`started ${id}`);
    this.arrived(`started ${id}`);
  }

  private stopped(id: string, kind: string): void {
    if (this.running !== id) this.problem(`got stopped ${id} (${kind}) while ${this.running ?? 'no timer'} ran for it`);
    this.running = undefined;
    this.timeline.push(`stopped ${id} ${kind}`);
    this.arrived(`stopped ${id}`);
  }

  /** The room waits for its stable guests' arrivals only: the others come and go. */
  private arrived(key: string): void {
    if (this.role === 'stable') this.room.tally.add(key);
  }

  private refused(key: string): void {
    const resolve = this.provoked.get(key)?.shift();
    if (!resolve) return this.problem(`got an error nobody provoked: ${key}`);
    this.room.context.figures.provoked++;
    resolve();
  }

  problem(text: string): void {
    this.room.context.figures.problems.add(`${this.name}: ${text}`);
  }

  async leave(): Promise<void> {
    this.leaving = true;
    await this.connection.close(1000);
  }
}

/** How a run goes: its kind, whether it has the ready check, and how it ends. */
interface Plan {
  kind: 'countdown' | 'stopwatch';
  duration?: number;
  readyCheck: boolean;
  end: 'expired' | 'by_moderator' | 'creator_left';
}

function planOf(draw: number): Plan {
  if (draw < 0.3) return { kind: 'countdown', duration: 1, readyCheck: false, end: 'expired' };
  if (draw < 0.55) return { kind: 'stopwatch', readyCheck: true, end: 'by_moderator' };
  if (draw < 0.8) return { kind: 'countdown', duration: 600, readyCheck: draw < 0.7, end: 'by_moderator' };
  if (draw < 0.9) return { kind: 'stopwatch', readyCheck: false, end: 'by_moderator' };
  return { kind: 'stopwatch', readyCheck: false, end: 'creator_left' };
}

export class SoakRoom {
  moderator!: Session;
  stable: Session[] = [];
  churners: Session[] = [];
  /** This phase's runs as a stable guest must have seen them: `started <id>`, `stopped <id> <kind>`. */
  runs: string[] = [];
  readonly tally = new Tally();
  private readonly ownerHttp: ConveneHttpClient;
  private sessionsOpened = 0;

  constructor(
    readonly index: number,
    readonly setup: RoomSetup,
    readonly context: Context,
    readonly size: { stable: number; churners: number },
  ) {
    this.ownerHttp = checkedHttp(context.url, setup.ownerToken);
  }

  /** Everyone joins: the moderator first, then the guests, `concurrency` at a time. */
  async fill(concurrency: number): Promise<void> {
    this.runs = [];
    this.moderator = await this.open('moderator');
    const { stable, churners } = this.size;
    const guests: Session[] = [];
    await pool(stable + churners, concurrency, async (i) => {
      guests[i] = await this.open(i < stable ? 'stable' : 'churner');
    });
    this.stable = guests.slice(0, stable);
    this.churners = guests.slice(stable);
  }

  /** Timer runs one after another, and the churning guests' comings and goings, until `stopping()`. */
  async drive(stopping: () => boolean): Promise<void> {
    const { problems } = this.context.figures;
    // a failed wait ends its loop (the others go on to the end of the phase), and is a problem
    const rounds = async () => {
      let n = 1;
      try {
        for (; !stopping(); n++) {
          await this.round(n);
          await sleep(50 + this.context.random() * 350);
        }
      } catch (err) {
        problems.add(`room ${this.index}, round ${n}: ${(err as Error).message}`);
      }
    };
    const churn = (slot: number) =>
      this.churn(slot, stopping).catch((err: unknown) => problems.add(`room ${this.index}, churning guest ${slot}: ${(err as Error).message}`));
    await Promise.all([rounds(), ...this.churners.map((_, slot) => churn(slot))]);
  }

  /** After `drive`: what every session saw must be what happened; returns nothing, reports problems. */
  verify(): void {
    for (const session of this.sessions()) {
      if (session.leaving) continue; // a session a failed loop left behind: that failure is reported
      if (session.running !== undefined) session.problem(`still believes ${session.running} runs after the last run ended`);
    }
    const expected = this.runs.join(' | ');
    for (const session of this.stable) {
      const seen = session.timeline.join(' | ');
      if (seen !== expected) session.problem(`saw the runs [${seen}], but the room had [${expected}]`);
    }
  }

  sessions(): Session[] {
    return [this.moderator, ...this.stable, ...this.churners];
  }

  async leave(): Promise<void> {
    await Promise.all(this.sessions().map((session) => session.leave()));
  }

  private async open(role: Role): Promise<Session> {
    const { url, figures } = this.context;
    const name = role === 'moderator' ? `Moderator ${this.index}` : `${role === 'stable' ? 'Guest' : 'Visitor'} ${this.index}.${++this.sessionsOpened}`;
    const connection = await startSignaling(role === 'moderator' ? this.ownerHttp : this.context.guestHttp, {
      url,
      roomId: this.setup.roomId,
      ...(role === 'moderator' ? {} : { inviteCode: this.setup.inviteCode }),
      WebSocket,
      validate: true,
    });
    const session = new Session(this, role, name, connection);
    figures.sessions++;
    figures.peakOpen = Math.max(figures.peakOpen, ++figures.open);
    connection.onFrame((frame) => session.receive(frame));
    void connection.closed.then((close) => {
      figures.open--;
      if (!session.leaving) session.problem(`the socket closed (${close.code} ${close.reason}) ${connection.failure ? `: ${connection.failure.message}` : ''}`);
    });
    const answer = await connection.join(name, { timeoutMs: WAIT_MS });
    if (answer.result !== 'join_success') throw new Error(`${name} could not join: ${answer.result}`);
    return session;
  }

  private everyStable(key: string): Promise<void> {
    return this.tally.reach(key, this.stable.length, WAIT_MS);
  }

  private async round(n: number): Promise<void> {
    const { random, figures } = this.context;
    const plan = planOf(random());
    const moderator = this.moderator;
    const started = quiet(moderator.connection.next('timer', 'started', { timeoutMs: WAIT_MS }));
    moderator.send('timer', {
      action: 'start',
      kind: plan.kind,
      ...(plan.duration !== undefined ? { duration: plan.duration } : {}),
      enable_ready_check: plan.readyCheck,
      title: `Round ${n}`,
      style: 'soak',
    });
    const id = (await started).payload.timer_id;
    this.runs.push(`started ${id}`);
    await this.everyStable(`started ${id}`);
    if (plan.end !== 'expired') await this.meanwhile(id, plan.readyCheck, n);

    if (plan.end === 'by_moderator') {
      const stopped = quiet(moderator.connection.next('timer', 'stopped', { timeoutMs: WAIT_MS }));
      moderator.send('timer', { action: 'stop', timer_id: id, reason: `Round ${n} is over` });
      await stopped;
    }
    if (plan.end === 'creator_left') await moderator.leave();
    this.runs.push(`stopped ${id} ${plan.end}`);
    await this.everyStable(`stopped ${id}`);
    if (plan.end === 'creator_left') this.moderator = await this.open('moderator');
    figures.runs.add(`${plan.kind} ${plan.end}`);
    this.tally.forget(id);
  }

  /** While a run that does not expire goes on: chat, a hand, the provoked refusals, ready statuses. */
  private async meanwhile(id: string, readyCheck: boolean, n: number): Promise<void> {
    const { random } = this.context;
    const some = Array.from({ length: 3 }, () => this.stable[Math.floor(random() * this.stable.length)]!);
    const [talker, hand, intruder] = some;
    const messages = [`Round ${n} in room ${this.index}, from a guest`, `Round ${n} in room ${this.index}, from the moderator`];
    talker!.send('chat', { action: 'send_message', scope: 'global', content: messages[0]! });
    this.moderator.send('chat', { action: 'send_message', scope: 'global', content: messages[1]! });
    hand!.send('control', { action: 'raise_hand' });
    const waits = [
      ...messages.map((content) => this.everyStable(`chat ${content}`)),
      intruder!.provoke('timer', { action: 'start', kind: 'stopwatch', enable_ready_check: false }, 'insufficient_permissions'),
      this.moderator.provoke('timer', { action: 'start', kind: 'stopwatch', enable_ready_check: false }, 'timer_already_running'),
    ];
    if (readyCheck) {
      const ready = new Set(some);
      for (const session of ready) session.send('timer', { action: 'update_ready_status', timer_id: id, status: true });
      waits.push(this.tally.reach(`ready ${id}`, ready.size * this.stable.length, WAIT_MS));
    }
    await Promise.all(waits);
    hand!.send('control', { action: 'lower_hand' });
    for (const content of messages) this.tally.forget(content);
  }

  /** One churning guest's slot: now and then it says something or raises its hand, leaves, and a new session takes its place. */
  private async churn(slot: number, stopping: () => boolean): Promise<void> {
    const { random } = this.context;
    while (!stopping()) {
      await pause(1_000 + random() * 4_000, stopping);
      if (stopping()) return;
      const leaving = this.churners[slot]!;
      const draw = random();
      if (draw < 0.3) leaving.send('chat', { action: 'send_message', scope: 'global', content: `${leaving.name} is off` });
      else if (draw < 0.5) leaving.send('control', { action: 'raise_hand' }); // and leaves with it up
      await leaving.leave();
      await sleep(50 + random() * 250);
      this.churners[slot] = await this.open('churner');
    }
  }
}

/** The rooms of a soak: `stable` + `churners` guests and a moderator each. */
export function soakRooms(
  url: string,
  setups: RoomSetup[],
  size: { stable: number; churners: number },
  figures: SignalingFigures,
  random: () => number,
): SoakRoom[] {
  const context: Context = { url, figures, random, guestHttp: checkedHttp(url) };
  return setups.map((setup, index) => new SoakRoom(index, setup, context, size));
}
