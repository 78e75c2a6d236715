/**
 * Hostile signaling frames derived from spec/asyncapi.yaml, for
 * test/property/signaling-hostile.test.ts, and what the contract says the server answers to each.
 *
 * Frames: every command of every namespace, built from its schema (schema-values.ts) and sent as
 * it is (valid, with participant and timer ids the test knows) or mutated (the frame, or only its
 * payload, made hostile: wrong types, missing and unknown fields, near misses of the namespace and
 * action, limits at the edge and beyond, strings of every kind); JSON that is no frame; text that
 * is no JSON; bytes that are no UTF-8, in binary and in text frames; frames at the soft (64 KiB)
 * and hard (1 MiB) size limits and one byte over; nesting thousands of levels deep.
 *
 * `expectedAnswer` reads a frame the way the contract describes (asyncapi.yaml, "Envelope" and
 * `control.error`): over the hard limit the socket closes with 1009; a text frame that is no UTF-8
 * fails the WebSocket itself (RFC 6455 §8.1: 1007); over the soft limit `message_too_large`; not
 * JSON `invalid_json`; an envelope or a command payload its schema refuses, an unknown action, or
 * an echo payload nesting more than 100 deep, `invalid_message`; a namespace of no module the
 * room runs (its tariff's `enabled_modules`; the contract's `media` has no module yet)
 * `invalid_namespace`; a command before joining `not_yet_joined` (except `control` and `echo`);
 * anything else is the module's to answer.
 */
import { isUtf8 } from 'node:buffer';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { parse } from 'yaml';
import { commandValidators, validateClientEnvelope } from '../../../generated/signaling/validators.js';
import { conforming, fieldsOf, hostile, resolve, withField, type Schema, type SchemaSource } from './schema-values.js';
import { nastyString, Sized } from './strings.js';

/** `[signaling] max_message_bytes` (over it `message_too_large`) and `max_frame_bytes` (over it close 1009). */
export interface FrameLimits {
  soft: number;
  hard: number;
}

export interface CommandShape {
  /** `<namespace>.<action>` (`echo.request` for the echo namespace's free action). */
  id: string;
  namespace: string;
  /** The schema of the whole frame (envelope and payload), its `$ref`s into `document`. */
  schema: Schema;
}

const ANY_ACTION = '*';

/** The AsyncAPI document as an object, and every command a client may send (the operations the server receives). */
export function contractCommands(file = new URL('../../../spec/asyncapi.yaml', import.meta.url)): { document: Record<string, any>; commands: CommandShape[] } {
  const document = parse(readFileSync(file, 'utf8')) as Record<string, any>;
  const commands: CommandShape[] = [];
  for (const operation of Object.values<{ action: string; messages: { $ref: string }[] }>(document.operations)) {
    if (operation.action !== 'receive') continue;
    for (const ref of operation.messages) {
      const message = resolve(ref, document);
      const id = String(message.name);
      commands.push({ id, namespace: id.split('.')[0]!, schema: message.payload as Schema });
    }
  }
  return { document, commands: commands.sort((a, b) => a.id.localeCompare(b.id)) };
}

/** A frame as sent: its bytes, text or binary, and what it is (for messages). */
export class Frame {
  constructor(
    readonly data: Buffer,
    readonly binary: boolean,
    readonly label: string,
  ) {}

  [fc.toStringMethod](): string {
    const head = this.data.subarray(0, 120).toString('utf8');
    return `${this.binary ? 'binary' : 'text'}(${this.label}, ${this.data.length} bytes: ${JSON.stringify(head)}${this.data.length > 120 ? '…' : ''})`;
  }
}

const json = (value: unknown, label: string, binary = false) => new Frame(Buffer.from(JSON.stringify(value)), binary, label);

/** An echo frame padded to exactly `size` bytes. */
function echoOfSize(size: number, binary: boolean): Frame {
  const empty = JSON.stringify({ namespace: 'echo', payload: { action: 'ping', padding: '' } });
  const text = empty.replace('""', `"${'x'.repeat(Math.max(0, size - empty.length))}"`);
  return new Frame(Buffer.from(text), binary, `echo of ${size} bytes`);
}

/** Texts that are no JSON, or JSON that is no frame. */
const NOT_FRAMES: Record<string, string | Buffer> = {
  empty: '',
  'white space': ' \n\t',
  truncated: '{"namespace": "echo", ',
  'single quotes': "{'namespace': 'echo', 'payload': {'action': 'ping'}}",
  'trailing comma': '{"namespace":"echo","payload":{"action":"ping"},}',
  'two documents': '{"namespace":"echo","payload":{"action":"ping"}}{}',
  NaN: '{"namespace":"echo","payload":{"action":"ping","n":NaN}}',
  'byte order mark': '\ufeff{"namespace":"echo","payload":{"action":"ping"}}',
  null: 'null',
  number: '42',
  string: '"control"',
  array: '[{"namespace":"echo","payload":{"action":"ping"}}]',
  'lone surrogate escapes': '{"namespace":"echo\\ud800","payload":{"action":"\\udfff"}}',
  'NUL escapes': '{"namespace":"echo","payload":{"action":"ping\\u0000","\\u0000":"\\u0000"}}',
  'number overflowing to Infinity': '{"namespace":"timer","payload":{"action":"start","kind":"countdown","duration":1e400,"enable_ready_check":false}}',
  'duplicate keys': '{"namespace":"echo","namespace":"control","payload":{"action":"join","display_name":"Dup"}}',
  'deeply nested echo': `{"namespace":"echo","payload":{"action":"ping","deep":${'['.repeat(30_000)}${']'.repeat(30_000)}}}`,
  'deeply nested command': `{"namespace":"chat","payload":{"action":"send_message","scope":"global","content":${'['.repeat(30_000)}${']'.repeat(30_000)}}}`,
  'ten thousand keys': `{"namespace":"echo","payload":{"action":"ping",${Array.from({ length: 10_000 }, (_, i) => `"k${i}":0`).join(',')}}}`,
};

/** Bytes that are no UTF-8: overlong, surrogates, stray continuation bytes, truncated sequences. */
const NOT_UTF8 = [Buffer.from([0xff, 0xfe]), Buffer.from([0xc0, 0xaf]), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from([0x80]), Buffer.from([0xe2, 0x82])];

function notUtf8(binary: boolean): fc.Arbitrary<Frame> {
  return fc
    .constantFrom(...NOT_UTF8)
    .map((bad) => new Frame(Buffer.concat([Buffer.from('{"namespace":"echo","payload":{"action":"'), bad, Buffer.from('"}}')]), binary, 'not UTF-8'));
}

/** Namespaces no module has (`media` among them until it is built), and near misses of those that exist. */
const NAMESPACES = fc.oneof(
  fc.constantFrom('polls', 'Control', 'control ', 'timer\u0000', '', '__proto__', 'constructor', 'breakout', 'recording', 'media'),
  nastyString,
);

export interface FrameSetting {
  document: Record<string, any>;
  limits: FrameLimits;
  commands: readonly CommandShape[];
  /** Participant and timer ids as they are now, for `format: uuid` fields. */
  knownIds: () => readonly string[];
}

/** Every kind of frame, valid commands and hostile ones, in proportions that reach every module. */
export function hostileFrames(setting: FrameSetting): fc.Arbitrary<Frame> {
  const { soft, hard } = setting.limits;
  const source: SchemaSource = { root: setting.document, knownIds: setting.knownIds };
  const binary = fc.oneof({ weight: 1, arbitrary: fc.constant(true) }, { weight: 4, arbitrary: fc.constant(false) });
  const command = fc.constantFrom(...setting.commands);
  const payloadSchema = (c: CommandShape) => resolve(resolve(c.schema, setting.document).properties.payload, setting.document);
  const fields = setting.commands.flatMap((c) =>
    fieldsOf(payloadSchema(c), setting.document)
      .filter((field) => field.path[0] !== 'action')
      .map((field) => ({ command: c, field })),
  );
  return fc.oneof(
    {
      weight: 6,
      arbitrary: fc.tuple(command, fc.boolean()).chain(([c, asBinary]) => conforming(c.schema, source).map((frame) => json(frame, `valid ${c.id}`, asBinary))),
    },
    {
      weight: 2,
      arbitrary: command.chain((c) =>
        hostile(payloadSchema(c), source).map((payload) => json({ namespace: c.namespace, payload }, `hostile payload of ${c.id}`)),
      ),
    },
    // one field of a valid command hostile, at any depth: where the modules' own checks are
    {
      weight: 4,
      arbitrary: fc
        .constantFrom(...fields)
        .chain(({ command: c, field }) =>
          fc
            .tuple(conforming(payloadSchema(c), source), hostile(field.schema, source))
            .map(([payload, value]) =>
              json({ namespace: c.namespace, payload: withField(payload, field.path, value) }, `${c.id} with a hostile ${field.path.join('.')}`),
            ),
        ),
    },
    { weight: 2, arbitrary: command.chain((c) => hostile(c.schema, source).map((frame) => json(frame, `hostile ${c.id}`))) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(NAMESPACES, command)
        .chain(([namespace, c]) =>
          conforming(payloadSchema(c), source).map((payload) => json({ namespace, payload }, `namespace ${JSON.stringify(namespace)}`)),
        ),
    },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom(...Object.keys(NOT_FRAMES)), binary)
        .map(([name, asBinary]) => new Frame(Buffer.from(NOT_FRAMES[name]!), asBinary, name)),
    },
    { weight: 1, arbitrary: fc.oneof(notUtf8(true), notUtf8(false)) },
    {
      weight: 1,
      arbitrary: fc.tuple(fc.constantFrom(soft, soft + 1, hard, hard + 1), fc.boolean()).map(([size, asBinary]) => echoOfSize(size, asBinary)),
    },
    { weight: 1, arbitrary: fc.tuple(fc.jsonValue({ maxDepth: 3 }), binary).map(([value, asBinary]) => json(value, 'any JSON', asBinary)) },
    {
      weight: 1,
      arbitrary: fc
        .constant(new Sized('😀', Math.ceil(soft / 4) + 1))
        .map((big) => json({ namespace: 'chat', payload: { action: 'send_message', scope: 'global', content: big } }, 'chat over the soft limit')),
    },
  );
}

/** What the contract says a frame gets, given whether the sender has joined. */
export type Expected =
  { close: 1007 | 1009 } | { error: 'message_too_large' | 'invalid_json' | 'invalid_message' | 'invalid_namespace' | 'not_yet_joined' } | { module: string };

/** `echo.request`: a payload nesting deeper (the payload itself counting as one) is `invalid_message`. */
const ECHO_MAX_NESTING = 100;

/** How deep objects and arrays nest in a JSON value (a scalar is 0), measured without recursion. */
function nesting(value: unknown): number {
  let deepest = 0;
  const pending: [unknown, number][] = [[value, 1]];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const [node, depth] = next;
    if (node === null || typeof node !== 'object') continue;
    deepest = Math.max(deepest, depth);
    for (const child of Object.values(node)) pending.push([child, depth + 1]);
  }
  return deepest;
}

/** `modules`: the namespaces the room runs (its tariff's `enabled_modules`, as `join_success` tells). */
export function expectedAnswer(frame: Frame, joined: boolean, limits: FrameLimits, modules: ReadonlySet<string>): Expected {
  if (frame.data.length > limits.hard) return { close: 1009 };
  if (!frame.binary && !isUtf8(frame.data)) return { close: 1007 };
  if (frame.data.length > limits.soft) return { error: 'message_too_large' };
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(frame.data));
  } catch {
    return { error: 'invalid_json' };
  }
  if (!validateClientEnvelope(value)) return { error: 'invalid_message' };
  const commands = (commandValidators as Record<string, Record<string, ((v: unknown) => boolean) | undefined> | undefined>)[value.namespace];
  if (!commands || !modules.has(value.namespace)) return { error: 'invalid_namespace' };
  const validate = commands[value.payload.action] ?? commands[ANY_ACTION];
  if (!validate || !validate(value)) return { error: 'invalid_message' };
  if (value.namespace === 'echo' && nesting(value.payload) > ECHO_MAX_NESTING) return { error: 'invalid_message' };
  if (!joined && value.namespace !== 'control' && value.namespace !== 'echo') return { error: 'not_yet_joined' };
  return { module: `${value.namespace}.${value.payload.action}` };
}
