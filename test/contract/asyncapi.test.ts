// The signaling contract: every example of spec/asyncapi.yaml passes the generated validator of its
// message, malformed frames fail, and every namespace, command, event and error code that the
// interface and docs/architecture.md §6 name is in the contract.
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import * as generated from '../../generated/signaling/validators.js';
import {
  commandValidators,
  eventValidators,
  validateClientEnvelope,
  validateHandshakeError,
  validateServerEnvelope,
  validate_control_error,
  validate_control_join,
  validate_echo_reply,
  validate_echo_request,
  validate_media_error,
  validate_media_publish_complete,
  validate_media_sdp_candidate,
  validate_media_sdp_candidate_event,
  validate_moderation_error,
  validate_timer_error,
  validate_timer_start,
  validate_timer_started,
  validate_timer_stopped,
  type ValidateFunction,
} from '../../generated/signaling/validators.js';

const SPEC_URL = new URL('../../spec/asyncapi.yaml', import.meta.url);
const spec = parse(readFileSync(SPEC_URL, 'utf8')) as {
  operations: Record<string, { action: 'send' | 'receive'; messages: { $ref: string }[] }>;
  components: {
    messages: Record<string, { examples?: { name?: string; payload: any }[] }>;
    schemas: Record<string, { examples?: unknown[] }>;
  };
};

/** What the interface (§6) and docs/architecture.md §6 name; the contract may have more, never less. */
const REQUIRED = {
  commands: {
    control: ['join', 'enter_room'],
    echo: ['*'],
    moderation: ['accept'],
    timer: ['start', 'stop', 'update_ready_status'],
  },
  events: {
    control: ['join_success', 'joined', 'left', 'update', 'join_blocked', 'error'],
    echo: ['*'],
    moderation: ['in_waiting_room', 'joined_waiting_room', 'left_waiting_room', 'accepted', 'error'],
    timer: ['started', 'stopped', 'updated_ready_status', 'error'],
  },
} as const;

const ERROR_CODES = {
  control: [
    'invalid_json',
    'invalid_message',
    'invalid_namespace',
    'message_too_large',
    'already_joined',
    'not_yet_joined',
    'invalid_username',
    'not_accepted_or_not_in_waiting_room',
    'internal_error',
  ],
  moderation: ['insufficient_permissions', 'not_in_waiting_room'],
  timer: ['insufficient_permissions', 'invalid_duration', 'timer_already_running'],
} as const;

/** What the reference's 2024 web app sends and reads in the media namespace. */
const MEDIA = {
  commands: [
    'publish',
    'publish_complete',
    'update_media_session',
    'unpublish',
    'subscribe',
    'resubscribe',
    'sdp_answer',
    'sdp_candidate',
    'sdp_end_of_candidates',
    'configure',
    'moderator_mute',
    'moderator_enable_force_mute',
    'moderator_disable_force_mute',
    'grant_presenter_role',
    'revoke_presenter_role',
    'update_speaking_state',
  ],
  events: [
    'sdp_answer',
    'sdp_offer',
    'sdp_candidate',
    'sdp_end_of_candidates',
    'webrtc_up',
    'webrtc_down',
    'media_status',
    'webrtc_slow',
    'request_mute',
    'force_mute_enabled',
    'force_mute_disabled',
    'presenter_granted',
    'presenter_revoked',
    'presenter_role_granted',
    'presenter_role_revoked',
    'speaker_updated',
    'error',
  ],
} as const;

const validatorsByName = generated as unknown as Record<string, ValidateFunction | undefined>;
const TS = '2026-05-04T09:30:00.000Z';
const TIMER_ID = '3b241101-e2bb-4255-8caf-4136c566a962';
const PARTICIPANT_ID = '7c9e6679-7425-40de-944b-e07fc1f90ae7';

/** Message id → 'receive' (client command) or 'send' (server event), from the operations. */
const directionOf = new Map<string, 'send' | 'receive'>();
for (const op of Object.values(spec.operations)) {
  for (const { $ref } of op.messages) directionOf.set($ref.split('/').pop()!, op.action);
}

const examples = Object.entries(spec.components.messages).flatMap(([id, message]) =>
  (message.examples ?? []).map((example, i) => ({ id, name: example.name ?? String(i), payload: example.payload })),
);

function expectValid(validate: ValidateFunction, frame: unknown) {
  const ok = validate(frame);
  expect(ok, JSON.stringify(validate.errors)).toBe(true);
}

describe('examples of spec/asyncapi.yaml', () => {
  it('every message has at least one example and sits in an operation', () => {
    for (const [id, message] of Object.entries(spec.components.messages)) {
      expect(message.examples?.length ?? 0, `${id} has no example`).toBeGreaterThan(0);
      expect(directionOf.get(id), `${id} is in no operation`).toBeDefined();
    }
  });

  it.each(examples)('$id example $name validates against its message schema', ({ id, payload }) => {
    const validate = validatorsByName[`validate_${id.replaceAll('.', '_')}`];
    expect(validate, `no generated validator for ${id}`).toBeTypeOf('function');
    expectValid(validate!, payload);

    // …and is found through the lookup table the server dispatches on, after the envelope check.
    const isCommand = directionOf.get(id) === 'receive';
    expectValid(isCommand ? validateClientEnvelope : validateServerEnvelope, payload);
    const table = isCommand ? commandValidators : eventValidators;
    const tag = isCommand ? payload.payload.action : (payload.payload.message ?? payload.payload.action);
    const byTag = table[payload.namespace];
    expect(byTag?.[tag] ?? byTag?.['*']).toBe(validate);
  });

  it('the handshake error body example validates', () => {
    const bodies = spec.components.schemas.ErrorBody?.examples ?? [];
    expect(bodies.length).toBeGreaterThan(0);
    for (const body of bodies) expectValid(validateHandshakeError, body);
  });
});

describe('every namespace, command and event the interface names is in the contract', () => {
  for (const [kind, table] of [
    ['commands', commandValidators],
    ['events', eventValidators],
  ] as const) {
    for (const [namespace, names] of Object.entries(REQUIRED[kind])) {
      it(`${kind} of ${namespace}: ${names.join(', ')}`, () => {
        for (const name of names) expect(table[namespace]?.[name], `${namespace} ${name}`).toBeTypeOf('function');
      });
    }
  }

  it('each error event accepts exactly its codes', () => {
    const validators = { control: validate_control_error, moderation: validate_moderation_error, timer: validate_timer_error };
    for (const [namespace, codes] of Object.entries(ERROR_CODES)) {
      const validate = validators[namespace as keyof typeof validators];
      for (const error of codes) expectValid(validate, { namespace, timestamp: TS, payload: { message: 'error', error } });
      expect(validate({ namespace, timestamp: TS, payload: { message: 'error', error: 'no_such_code' } })).toBe(false);
    }
  });
});

describe("what the reference's 2024 web app sends and reads (issue 16) is in the contract", () => {
  it('moderation enable_waiting_room, disable_waiting_room, change_display_name, and their events and errors', () => {
    for (const action of ['enable_waiting_room', 'disable_waiting_room', 'change_display_name']) {
      expect(commandValidators.moderation?.[action], action).toBeTypeOf('function');
    }
    for (const message of ['waiting_room_enabled', 'waiting_room_disabled', 'accepted', 'display_name_changed']) {
      expect(eventValidators.moderation?.[message], message).toBeTypeOf('function');
    }
    for (const error of ['cannot_change_name_of_registered_users', 'invalid_display_name']) {
      expectValid(validate_moderation_error, { namespace: 'moderation', timestamp: TS, payload: { message: 'error', error } });
    }
    const rename = { namespace: 'moderation', payload: { action: 'change_display_name', target: PARTICIPANT_ID, new_name: 'Bob' } };
    expectValid(commandValidators.moderation!.change_display_name!, rename);
    expect(commandValidators.moderation!.change_display_name!({ ...rename, payload: { action: 'change_display_name', target: PARTICIPANT_ID } })).toBe(false);
  });

  it('media: every command the app sends and every event it reads', () => {
    for (const action of MEDIA.commands) expect(commandValidators.media?.[action], action).toBeTypeOf('function');
    for (const message of MEDIA.events) expect(eventValidators.media?.[message], message).toBeTypeOf('function');
  });

  it('media error: source and media_session_type exactly with invalid_request_offer and invalid_configure_request', () => {
    const error = (payload: object) => validate_media_error({ namespace: 'media', timestamp: TS, payload: { message: 'error', ...payload } });
    const stream = { source: PARTICIPANT_ID, media_session_type: 'video' };
    for (const code of ['invalid_sdp_offer', 'handle_sdp_answer', 'invalid_candidate', 'invalid_end_of_candidates', 'permission_denied']) {
      expect(error({ error: code }), code).toBe(true);
      expect(error({ error: code, ...stream }), `${code} with a stream`).toBe(false);
    }
    for (const code of ['invalid_request_offer', 'invalid_configure_request']) {
      expect(error({ error: code, ...stream }), code).toBe(true);
      expect(error({ error: code }), `${code} without a stream`).toBe(false);
    }
    expect(error({ error: 'no_such_code' })).toBe(false);
  });

  it("media sdp_candidate: the browser's camelCase candidate in, sdpMLineIndex and candidate only out", () => {
    const candidate = { sdpMid: null, sdpMLineIndex: 0, candidate: 'candidate:1 1 udp 2015363327 192.0.2.10 20012 typ host', usernameFragment: 'abcd' };
    const command = (c: object) =>
      validate_media_sdp_candidate({
        namespace: 'media',
        payload: { action: 'sdp_candidate', target: PARTICIPANT_ID, media_session_type: 'video', candidate: c },
      });
    expect(command(candidate)).toBe(true);
    expect(command({ ...candidate, sdp_m_line_index: 0, sdpMLineIndex: undefined })).toBe(false);
    expect(command({ ...candidate, candidate: 'x'.repeat(1025) })).toBe(false);
    const event = (c: object) =>
      validate_media_sdp_candidate_event({
        namespace: 'media',
        timestamp: TS,
        payload: { message: 'sdp_candidate', source: PARTICIPANT_ID, media_session_type: 'video', candidate: c },
      });
    expect(event({ sdpMLineIndex: 0, candidate: candidate.candidate })).toBe(true);
    expect(event({ sdpMid: '0', sdpMLineIndex: 0, candidate: candidate.candidate })).toBe(false);
  });

  it("media publish_complete: the app's video_settings (a number) is accepted and ignored", () => {
    const frame = (state: object) =>
      validate_media_publish_complete({ namespace: 'media', payload: { action: 'publish_complete', media_session_type: 'video', media_session_state: state } });
    expect(frame({ audio: true, video: false, video_settings: 2 })).toBe(true);
    expect(frame({ audio: true, video: false })).toBe(true);
    expect(frame({ audio: true })).toBe(false);
  });
});

describe('malformed frames fail', () => {
  const start = { action: 'start', kind: 'countdown', duration: 60, enable_ready_check: false };

  it('a frame without namespace', () => {
    const frame = { payload: { action: 'join', display_name: 'Alice' } };
    expect(validateClientEnvelope(frame)).toBe(false);
    expect(validate_control_join(frame)).toBe(false);
  });

  it('a frame whose payload has no action', () => {
    expect(validateClientEnvelope({ namespace: 'timer', payload: { kind: 'countdown' } })).toBe(false);
    expect(validateClientEnvelope({ namespace: 'timer', payload: 'start' })).toBe(false);
  });

  it('timer start without kind, or without enable_ready_check', () => {
    const { kind: _kind, ...noKind } = start;
    expect(validate_timer_start({ namespace: 'timer', payload: noKind })).toBe(false);
    expect(validate_timer_start.errors?.[0]).toMatchObject({ instancePath: '/payload', params: { missingProperty: 'kind' } });
    const { enable_ready_check: _ready, ...noReady } = start;
    expect(validate_timer_start({ namespace: 'timer', payload: noReady })).toBe(false);
  });

  it('timer start: every duration reaches the module, which judges it (invalid_duration), whatever its type', () => {
    for (const duration of [0, -5, 1.5, '60', true, null, { seconds: 60 }, [60]]) {
      expectValid(validate_timer_start, { namespace: 'timer', payload: { ...start, duration } });
    }
    expect(validate_timer_start({ namespace: 'timer', payload: { ...start, kind: 'hourglass' } })).toBe(false);
    expectValid(validate_timer_start, { namespace: 'timer', payload: { ...start, kind: 'stopwatch', duration: undefined } });
  });

  it('commands ignore unknown fields; events allow none', () => {
    expectValid(validate_timer_start, { namespace: 'timer', payload: { ...start, colour: 'red' }, trace: 1 });
    const started = {
      namespace: 'timer',
      timestamp: TS,
      payload: { message: 'started', timer_id: TIMER_ID, kind: 'stopwatch', started_at: TS, ready_check_enabled: false },
    };
    expectValid(validate_timer_started, started);
    expect(validate_timer_started({ ...started, payload: { ...started.payload, extra: true } })).toBe(false);
    expect(validate_timer_started({ ...started, extra: true })).toBe(false);
    expect(validateServerEnvelope({ ...started, extra: true })).toBe(false);
  });

  it('server events need a date-time timestamp', () => {
    const frame = { namespace: 'timer', payload: { message: 'error', error: 'invalid_duration' } };
    expect(validate_timer_error(frame)).toBe(false);
    expect(validate_timer_error({ ...frame, timestamp: 'yesterday' })).toBe(false);
    expect(validateServerEnvelope(frame)).toBe(false);
  });

  it('timer started: ends_at exactly for countdowns', () => {
    const base = { message: 'started', timer_id: TIMER_ID, started_at: TS, ready_check_enabled: true };
    expect(validate_timer_started({ namespace: 'timer', timestamp: TS, payload: { ...base, kind: 'countdown' } })).toBe(false);
    expect(validate_timer_started({ namespace: 'timer', timestamp: TS, payload: { ...base, kind: 'stopwatch', ends_at: TS } })).toBe(false);
  });

  it('timer stopped: participant_id with by_moderator only', () => {
    const stopped = (payload: object) =>
      validate_timer_stopped({ namespace: 'timer', timestamp: TS, payload: { message: 'stopped', timer_id: TIMER_ID, ...payload } });
    expect(stopped({ kind: 'by_moderator' })).toBe(false);
    expect(stopped({ kind: 'expired', participant_id: PARTICIPANT_ID })).toBe(false);
    expect(stopped({ kind: 'creator_left', reason: 'bye' })).toBe(false);
    expect(stopped({ kind: 'by_moderator', participant_id: PARTICIPANT_ID })).toBe(true);
  });

  it("join: display_name is a string; its length is the module's rule (invalid_username after trimming)", () => {
    const join = (display_name: unknown) => validate_control_join({ namespace: 'control', payload: { action: 'join', display_name } });
    expect(join(42)).toBe(false);
    expect(join(null)).toBe(false);
    expect(join('')).toBe(true);
    expect(join(` ${'x'.repeat(100)} `)).toBe(true);
  });

  it('a frame of one namespace does not pass another namespace’s validator', () => {
    expect(validate_control_join({ namespace: 'timer', payload: { action: 'join', display_name: 'Alice' } })).toBe(false);
  });

  it('echo carries any action and any fields, both ways', () => {
    expectValid(validate_echo_request, { namespace: 'echo', payload: { action: 'anything', n: [1, 2] } });
    expectValid(validate_echo_reply, { namespace: 'echo', timestamp: TS, payload: { action: 'anything', n: [1, 2] } });
    expect(validate_echo_reply({ namespace: 'echo', timestamp: TS, payload: { message: 'ping' } })).toBe(false);
  });

  it('the lookup tables find nothing through the object prototype', () => {
    for (const name of ['constructor', '__proto__', 'toString', 'hasOwnProperty']) {
      expect(commandValidators[name]).toBeUndefined();
      expect(eventValidators[name]).toBeUndefined();
      expect(commandValidators.timer?.[name]).toBeUndefined();
    }
  });
});

describe('generated/signaling files', () => {
  it.each(['validators.js', 'validators.d.ts', 'types.ts'])('%s starts with the generated-file line', (file) => {
    const text = readFileSync(new URL(`../../generated/signaling/${file}`, import.meta.url), 'utf8');
    expect(text.split('\n', 1)[0]).toBe('// Generated by scripts/generate.ts from spec/asyncapi.yaml. Do not edit.');
  });

  // what lets browsers and bundlers load them as they are
  it('the validators are plain ES modules that import only their runtime, which imports nothing', () => {
    const read = (file: string) => readFileSync(new URL(`../../generated/signaling/${file}`, import.meta.url), 'utf8');
    const imports = (text: string) => [...text.matchAll(/^\s*import\b.*$|\bimport\s*\(|\brequire\s*\(/gm)].map((m) => m[0].trim());
    expect(imports(read('validators.js'))).toEqual(['import { formats, ucs2length } from "./validator-runtime.js";']);
    expect(imports(read('validator-runtime.js'))).toEqual([]);
  });
});
