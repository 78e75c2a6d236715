/**
 * The handshake's pure parts: reading protocol and ticket from `Sec-WebSocket-Protocol` (one header
 * or several, any order, client's preference first) and telling a WebSocket opening from other
 * upgrade requests, each rejection with its status and the contract's error body.
 */
import { describe, expect, it } from 'vitest';
import { validateHandshakeError } from '../../../generated/signaling/validators.js';
import { randomAlphanumeric } from '../../../src/domain/tickets/random-token.js';
import { checkUpgradeRequest, parseHandshake, type HandshakeError, type HandshakeOffer } from '../../../src/signaling/handshake.js';

const ACCEPTED = ['service-signaling-json-v1.0', 'opentalk-signaling-json-v1.0', 'k3k-signaling-json-v1.0'];
const TICKET = randomAlphanumeric();

function rejected(offer: HandshakeOffer): HandshakeError {
  if (offer.ok) throw new Error(`accepted: ${JSON.stringify(offer)}`);
  return offer.error;
}

function expectRejection(offer: HandshakeOffer, status: number, code: string) {
  const error = rejected(offer);
  expect(error.status).toBe(status);
  expect(error.body).toMatchObject({ code, status: String(status), documentation_url: '/docs#signaling' });
  expect(validateHandshakeError(error.body), JSON.stringify(validateHandshakeError.errors)).toBe(true);
}

describe('parseHandshake', () => {
  it('reads the protocol and the ticket of one header', () => {
    expect(parseHandshake(`service-signaling-json-v1.0, ticket#${TICKET}`, ACCEPTED)).toEqual({
      ok: true,
      protocol: 'service-signaling-json-v1.0',
      ticket: TICKET,
    });
  });

  it.each(ACCEPTED)('accepts %s', (protocol) => {
    expect(parseHandshake(`${protocol}, ticket#${TICKET}`, ACCEPTED)).toEqual({ ok: true, protocol, ticket: TICKET });
  });

  it('takes the entries in any order, over several headers, trimmed, with empty entries skipped', () => {
    const expected = { ok: true, protocol: 'opentalk-signaling-json-v1.0', ticket: TICKET };
    expect(parseHandshake(`ticket#${TICKET}, opentalk-signaling-json-v1.0`, ACCEPTED)).toEqual(expected);
    expect(parseHandshake([`ticket#${TICKET}`, 'opentalk-signaling-json-v1.0'], ACCEPTED)).toEqual(expected);
    expect(parseHandshake([' x-unknown ,, ', `\tticket#${TICKET}  `, 'opentalk-signaling-json-v1.0'], ACCEPTED)).toEqual(expected);
  });

  it("chooses the first of the client's accepted protocols, not the server's", () => {
    const offer = parseHandshake(`x-other, k3k-signaling-json-v1.0, service-signaling-json-v1.0, ticket#${TICKET}`, ACCEPTED);
    expect(offer).toMatchObject({ ok: true, protocol: 'k3k-signaling-json-v1.0' });
  });

  it('accepts only the configured protocols', () => {
    expectRejection(parseHandshake(`opentalk-signaling-json-v1.0, ticket#${TICKET}`, ['service-signaling-json-v1.0']), 400, 'invalid_protocol');
  });

  it('takes everything after the first # as the ticket', () => {
    // `#<ticket>` is not `<ticket>`: the entry is not cut at its last `#`
    expectRejection(parseHandshake(`service-signaling-json-v1.0, ticket##${TICKET}`, ACCEPTED), 401, 'invalid_ticket');
  });

  it.each([
    ['no header', undefined],
    ['an empty header', ''],
    ['only separators', ' , ,'],
    ['only a ticket', `ticket#${TICKET}`],
    ['no headers at all', []],
  ])('answers 400 missing_protocol for %s', (_name, header) => {
    expectRejection(parseHandshake(header, ACCEPTED), 400, 'missing_protocol');
  });

  it('answers 400 invalid_protocol when no offered protocol is accepted, ticket or not', () => {
    expectRejection(parseHandshake(`chat, superchat, ticket#${TICKET}`, ACCEPTED), 400, 'invalid_protocol');
    expectRejection(parseHandshake('SERVICE-SIGNALING-JSON-V1.0', ACCEPTED), 400, 'invalid_protocol');
  });

  it('answers 401 missing_ticket without a ticket entry', () => {
    expectRejection(parseHandshake('service-signaling-json-v1.0', ACCEPTED), 401, 'missing_ticket');
    expectRejection(parseHandshake(`service-signaling-json-v1.0, ticket-${TICKET}`, ACCEPTED), 401, 'missing_ticket');
  });

  it.each([
    ['empty', ''],
    ['63 characters', TICKET.slice(1)],
    ['65 characters', `${TICKET}a`],
    ['a character outside [A-Za-z0-9]', `${TICKET.slice(1)}-`],
    ['non-ASCII letters', `${TICKET.slice(2)}äö`],
  ])('answers 401 invalid_ticket for a malformed ticket (%s)', (_name, ticket) => {
    expectRejection(parseHandshake(`service-signaling-json-v1.0, ticket#${ticket}`, ACCEPTED), 401, 'invalid_ticket');
  });

  it('accepts every ticket the start operations issue', () => {
    for (let i = 0; i < 100; i++) {
      const ticket = randomAlphanumeric();
      expect(parseHandshake(`service-signaling-json-v1.0, ticket#${ticket}`, ACCEPTED)).toMatchObject({ ok: true, ticket });
    }
  });
});

describe('checkUpgradeRequest', () => {
  const opening = {
    method: 'GET',
    headers: { upgrade: 'websocket', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==', 'sec-websocket-version': '13' },
  };

  it('accepts a WebSocket opening', () => {
    expect(checkUpgradeRequest(opening)).toBeUndefined();
    expect(checkUpgradeRequest({ ...opening, headers: { ...opening.headers, upgrade: 'WebSocket' } })).toBeUndefined();
  });

  it.each([
    ['another method', { ...opening, method: 'POST' }],
    ['another upgrade', { ...opening, headers: { ...opening.headers, upgrade: 'h2c' } }],
    ['no key', { ...opening, headers: { ...opening.headers, 'sec-websocket-key': undefined } }],
    ['a malformed key', { ...opening, headers: { ...opening.headers, 'sec-websocket-key': 'short' } }],
    ['no version', { ...opening, headers: { ...opening.headers, 'sec-websocket-version': undefined } }],
    ['an unknown version', { ...opening, headers: { ...opening.headers, 'sec-websocket-version': '12' } }],
  ])('answers 400 invalid_upgrade for %s', (_name, request) => {
    const error = checkUpgradeRequest(request);
    expect(error?.status).toBe(400);
    expect(error?.body).toMatchObject({ code: 'invalid_upgrade', status: '400', documentation_url: '/docs#signaling' });
    expect(error?.body.message).toEqual(expect.any(String));
  });
});
