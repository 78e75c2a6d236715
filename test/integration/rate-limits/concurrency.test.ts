/**
 * Every rate-limited secret (guesses.ts) on one instance, over HTTP: wrong guesses fired at once get
 * no more comparisons than the limit, per source and per target, the rest 429 with the contract's
 * error body and Retry-After; a short window opens again when it ends; and no honest party's right
 * guess is refused for strangers' failures, even at the same room. On the embedded pass the
 * instance counts in process; with REDIS_URL it counts in Redis.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { freshSource, startRoom } from '../../support/signaling.js';
import { useTestApp, type TestApp } from '../../support/test-app.js';
import {
  burst,
  createScene,
  expectTooMany,
  failuresLeft,
  failuresOf,
  guesses,
  loginPair,
  rateLimitedConfig,
  sourceBudget,
  tally,
  type Scene,
} from './guesses.js';

const limits = { window_seconds: 300, failures_per_source: 5, failures_per_target: 20 };
const AT_ONCE = 100;

const app = useTestApp(rateLimitedConfig(limits));
let scene: Scene;
beforeEach(async () => {
  scene = await createScene(app, ...(await loginPair(app)));
});

describe.each(guesses)('$name', (guess) => {
  it(`compares its budget of ${AT_ONCE} wrong guesses fired at once from one source, then not the right one`, async () => {
    const budget = sourceBudget(guess, limits);
    const source = freshSource();
    const wrong = () => guess.wrong(app, scene, source);
    const failures = failuresOf(guess, limits.window_seconds, await burst(AT_ONCE, wrong));
    expect(failures).toBeLessThanOrEqual(budget);
    if (!guess.afterAnotherGuard) expect(failures).toBe(budget);
    // exactly the limit in all: what the burst left (refused while others were in flight) is still there
    expect(failures + (await failuresLeft(guess, limits.window_seconds, wrong))).toBe(budget);
    const refused = await guess.right(app, scene, source);
    expect(expectTooMany(refused, guess.operationId, limits.window_seconds)).toBeGreaterThan(limits.window_seconds - 60);
    // from the same address someone else's right guess is refused where the address is counted (one
    // client guessing), and served where it is not (a gateway, whose address is every caller's)
    const honest = await guess.honest(app, scene, source);
    if (guess.perSource) expectTooMany(honest, guess.operationId, limits.window_seconds);
    else expect(honest.status).toBe(guess.success);
  });

  it(`compares ${limits.failures_per_target} of ${AT_ONCE} wrong guesses fired at once from as many sources at one target, and refuses no honest party`, async () => {
    const wrong = () => guess.wrong(app, scene, freshSource());
    const failures = failuresOf(guess, limits.window_seconds, await burst(AT_ONCE, wrong));
    expect(failures).toBeLessThanOrEqual(limits.failures_per_target);
    if (!guess.afterAnotherGuard) expect(failures).toBe(limits.failures_per_target);
    expect(failures + (await failuresLeft(guess, limits.window_seconds, wrong))).toBe(limits.failures_per_target);
    const right = await guess.right(app, scene, freshSource());
    // the guesser's own budget (its account, code or call-in id) is used up; where the target is the
    // code guessed, the right code is another target
    if (guess.sameTarget) expectTooMany(right, guess.operationId, limits.window_seconds);
    else expect(right.status).toBe(guess.success);
    expect((await guess.honest(app, scene, freshSource())).status).toBe(guess.success);
  });

  it("refuses none of honest parties' right guesses while one source fires wrong ones at once", async () => {
    const attacker = freshSource();
    const answers = await Promise.all([burst(AT_ONCE / 2, () => guess.wrong(app, scene, attacker)), burst(10, () => guess.honest(app, scene, freshSource()))]);
    expect(failuresOf(guess, limits.window_seconds, answers[0])).toBeLessThanOrEqual(sourceBudget(guess, limits));
    expect(tally(answers[1])).toEqual({ [guess.success]: 10 });
  });
});

/** The right guesses that need no room password (both starts of a room with one ask for it). */
const withoutRoomPassword = guesses.filter((g) => g.operationId !== 'start_room' && g.operationId !== 'start_invited_room');

describe('a source or a target used up', () => {
  it('leaves other targets, other kinds of secret and the room owner alone', async () => {
    const password = guesses.find((g) => g.operationId === 'start_room')!;
    failuresOf(password, limits.window_seconds, await burst(AT_ONCE, () => password.wrong(app, scene, freshSource())));
    expectTooMany(await password.right(app, scene, freshSource()), 'start_room', limits.window_seconds);
    // another invitee has a budget of its own; the owner is asked for no password
    expect((await password.honest(app, scene, freshSource())).status).toBe(200);
    expect((await startRoom(app, scene.roomId, { token: scene.owner.accessToken, source: freshSource() })).status).toBe(200);
    // every secret of another room, and the other kinds of secret of this one
    const other = await createScene(app, scene.owner, scene.invitee, scene.otherInvitee);
    for (const guess of guesses) expect((await guess.right(app, other, freshSource())).status, guess.name).toBe(guess.success);
    for (const guess of withoutRoomPassword) expect((await guess.right(app, scene, freshSource())).status, guess.name).toBe(guess.success);
  });

  it('keeps a source its other kinds of secret, but not other targets of the used-up kind', async () => {
    const source = freshSource();
    const password = guesses.find((g) => g.operationId === 'start_room')!;
    for (let i = 0; i < limits.failures_per_source; i++) expect((await password.wrong(app, scene, source)).status).toBe(401);
    const other = await createScene(app, scene.owner, scene.invitee, scene.otherInvitee);
    expectTooMany(await password.right(app, other, source), 'start_room', limits.window_seconds); // one client guessing many rooms
    for (const guess of withoutRoomPassword) expect((await guess.right(app, scene, source)).status, guess.name).toBe(guess.success);
  });
});

describe('invite codes, wherever given', () => {
  it('share one budget per source: in a body, as InviteCode and as Bearer', async () => {
    const source = freshSource();
    const codeGuesses = guesses.filter((g) => g.kind === 'invite');
    expect(codeGuesses.length).toBeGreaterThanOrEqual(limits.failures_per_source);
    for (const guess of codeGuesses.slice(0, limits.failures_per_source)) {
      expect((await guess.wrong(app, scene, source)).status, guess.name).toBe(guess.failure);
    }
    for (const guess of codeGuesses) expectTooMany(await guess.right(app, scene, source), guess.operationId, limits.window_seconds);
  });
});

describe('a short window', () => {
  const short = { window_seconds: 3, failures_per_source: 2, failures_per_target: 50 };
  let quick: TestApp;
  beforeAll(async () => {
    quick = await app.withConfig(rateLimitedConfig(short));
  });
  afterAll(() => quick?.close());

  it('opens again when it ends, for every secret, no sooner than Retry-After says', async () => {
    const sources = guesses.map(() => freshSource());
    const retryAfters = await Promise.all(
      guesses.map(async (guess, i) => {
        for (let n = 0; n < sourceBudget(guess, short); n++) {
          expect((await guess.wrong(quick, scene, sources[i]!)).status, guess.name).toBe(guess.failure);
        }
        const retryAfter = expectTooMany(await guess.right(quick, scene, sources[i]!), guess.operationId, short.window_seconds);
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        return retryAfter;
      }),
    );
    await new Promise((resolve) => setTimeout(resolve, Math.max(...retryAfters) * 1000 + 100));
    for (const [i, guess] of guesses.entries()) {
      expect((await guess.right(quick, scene, sources[i]!)).status, guess.name).toBe(guess.success);
      expect((await guess.wrong(quick, scene, sources[i]!)).status, guess.name).toBe(guess.failure); // counted anew
    }
  });
});
