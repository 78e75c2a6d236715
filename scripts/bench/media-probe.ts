// What the media benchmark measures inside a participant's page, beside the page client of
// test/support/media-page.ts (which it leaves as the tests use it): `installMediaProbe` runs in the
// page before `installMediaClient` (playwright serialises it: it uses nothing from this module) and
//
// - replaces the page's WebSocket with one that notes, in the page's clock (performance.now()), when
//   `join`, each `publish` and each `subscribe` left and when each `sdp_answer` and `sdp_offer`
//   arrived, and counts the frames of the `media` namespace and of the others, each way;
// - with `watchDecoding`, polls each subscription's getStats every POLL_MS until its first decoded
//   video frame, and notes when;
// - with `video`, asks the fake camera for that size instead of the client's 640x480.
//
// `probeOf(page)` reads it all back.
import type { Page } from 'playwright-core';

export interface ProbeOptions {
  watchDecoding: boolean;
  video?: { width: number; height: number };
}

/** Times in the page's clock (ms); keys `<type>` for own streams, `<source>:<type>` for subscriptions. */
export interface Probe {
  joinSentAt?: number;
  publishSentAt: Record<string, number>;
  answerAt: Record<string, number>;
  subscribeSentAt: Record<string, number>;
  offerAt: Record<string, number>;
  firstDecodedAt: Record<string, number>;
  frames: { mediaIn: number; mediaOut: number; otherIn: number; otherOut: number };
}

export function installMediaProbe(options: ProbeOptions): void {
  const global = globalThis as any;
  if (global.benchProbe) return;
  const POLL_MS = 20;
  const probe: Probe = {
    publishSentAt: {},
    answerAt: {},
    subscribeSentAt: {},
    offerAt: {},
    firstDecodedAt: {},
    frames: { mediaIn: 0, mediaOut: 0, otherIn: 0, otherOut: 0 },
  };
  global.benchProbe = probe;

  const noteSent = (text: string) => {
    const at = performance.now();
    const { namespace, payload } = JSON.parse(text);
    if (namespace !== 'media') {
      probe.frames.otherOut++;
      if (namespace === 'control' && payload.action === 'join') probe.joinSentAt ??= at;
      return;
    }
    probe.frames.mediaOut++;
    if (payload.action === 'publish') probe.publishSentAt[payload.media_session_type] ??= at;
    if (payload.action === 'subscribe') probe.subscribeSentAt[`${payload.target}:${payload.media_session_type}`] ??= at;
  };
  const noteReceived = (text: string) => {
    const at = performance.now();
    const { namespace, payload } = JSON.parse(text);
    if (namespace !== 'media') {
      probe.frames.otherIn++;
      return;
    }
    probe.frames.mediaIn++;
    if (payload.message === 'sdp_answer') probe.answerAt[payload.media_session_type] ??= at;
    if (payload.message === 'sdp_offer') probe.offerAt[`${payload.source}:${payload.media_session_type}`] ??= at;
  };
  global.WebSocket = class extends global.WebSocket {
    constructor(url: string, protocols: string[]) {
      super(url, protocols);
      this.addEventListener('message', (event: { data: string }) => noteReceived(event.data));
    }
    send(data: string): void {
      noteSent(data);
      super.send(data);
    }
  };

  if (options.video) {
    const devices = global.navigator.mediaDevices;
    const getUserMedia = devices.getUserMedia.bind(devices);
    devices.getUserMedia = (constraints: any) => getUserMedia(constraints.video ? { ...constraints, video: options.video } : constraints);
  }

  if (options.watchDecoding) {
    const poll = async () => {
      for (const client of Object.values<any>(global.convene ?? {})) {
        for (const [key, subscriber] of Object.entries<any>(client.subscribers)) {
          if (!subscriber.pc || probe.firstDecodedAt[key] !== undefined) continue;
          let decoded = 0;
          (await subscriber.pc.getStats()).forEach((report: any) => {
            if (report.type === 'inbound-rtp' && report.kind === 'video') decoded += report.framesDecoded ?? 0;
          });
          if (decoded > 0) probe.firstDecodedAt[key] ??= performance.now();
        }
      }
      setTimeout(() => void poll(), POLL_MS);
    };
    void poll();
  }
}

export const probeOf = (page: Page): Promise<Probe> => page.evaluate(() => (globalThis as any).benchProbe);
