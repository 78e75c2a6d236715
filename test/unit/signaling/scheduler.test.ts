/**
 * The system scheduler runs a task when its clock has reached the task's time, never before, even
 * when setTimeout (on the monotonic clock) fires while the wall clock still reads earlier.
 */
import { expect, it } from 'vitest';
import { systemScheduler } from '../../../src/signaling/scheduler.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

it('waits until its clock reads the task time, however early the timer fires', async () => {
  let clock = 0;
  const scheduler = systemScheduler(() => clock);
  let ran = 0;
  scheduler.at(30, () => ran++);
  await sleep(60); // the timer has fired; the clock still reads 0
  expect(ran).toBe(0);
  clock = 30;
  await sleep(60);
  expect(ran).toBe(1);
});

it('runs a task whose time is past at once, and not after it is cancelled', async () => {
  const scheduler = systemScheduler();
  let ran = 0;
  scheduler.at(Date.now() - 1_000, () => ran++);
  const cancel = scheduler.at(Date.now() + 20, () => ran++);
  cancel();
  await sleep(50);
  expect(ran).toBe(1);
});
