/**
 * A participant's media as the reference's 2024 web app handles it, for headless Chromium pages
 * (test/e2e/media-*.test.ts, scripts/bench/media.bench.ts): the signaling socket, `publish` of the
 * fake camera and microphone (or of the screen) with three simulcast layers, `publish_complete` on
 * the first `media_status` saying Janus receives, a subscription to every stream another participant
 * publishes (as `control` `join_success`, `joined` and `update` show it) with the app's answer and
 * trickle, `request_mute` obeyed, and a presenter role that is revoked stopping the screen.
 *
 * `installMediaClient` runs in the page (playwright serialises it: it uses nothing from this module)
 * and puts `globalThis.convene`, one entry per participant name, each a small API the test calls
 * with `page.evaluate`.
 */
import type { Page } from 'playwright-core';

/** Flags for Chromium to give pages a fake camera, microphone and screen without asking. */
export const MEDIA_CHROMIUM_ARGS = [
  '--use-fake-device-for-media-stream',
  '--use-fake-ui-for-media-stream',
  '--auto-select-desktop-capture-source=Entire screen',
  '--auto-accept-this-tab-capture',
];

/** What the test reads of one participant's page. */
export interface MediaSnapshot {
  id?: string;
  /** Every server frame's raw text, in order. */
  frames: string[];
  /** `<source>:<type>` of each subscription with its inbound RTP: bytes and decoded frames per kind. */
  /** `frameWidth`: of the video being decoded now (the simulcast layer Janus forwards). */
  inbound: Record<string, { audioBytes: number; videoBytes: number; framesDecoded: number; frameWidth: number }>;
  /** Publishers by type: whether Janus said it receives. */
  published: Record<string, boolean>;
  muted: boolean;
  /** The socket's close code, once it closed. */
  closed?: number;
}

export function installMediaClient(): void {
  const global = globalThis as any;
  if (global.convene) return;
  // the page's own (this file is compiled without the DOM's types)
  const { RTCPeerConnection, navigator } = global;
  const clients: Record<string, any> = (global.convene = {});

  global.conveneOpen = (name: string, url: string, protocols: string[], displayName: string) =>
    new Promise<void>((resolve, reject) => {
      const ws = new WebSocket(url, protocols);
      const client: any = (clients[name] = { ws, frames: [], publishers: {}, subscribers: {}, streams: {}, muted: false, id: undefined });
      const sendMedia = (payload: object) => ws.send(JSON.stringify({ namespace: 'media', payload }));
      client.sendMedia = sendMedia;
      // the app's release(): the tracks stop, the publisher closes, the server is told
      client.unpublish = (type: string) => {
        const publisher = client.publishers[type];
        if (!publisher) return;
        for (const track of publisher.stream.getTracks()) track.stop();
        publisher.pc.close();
        delete client.publishers[type];
        sendMedia({ action: 'unpublish', media_session_type: type });
      };
      ws.onopen = () => {
        ws.send(JSON.stringify({ namespace: 'control', payload: { action: 'join', display_name: displayName } }));
        resolve();
      };
      ws.onerror = () => reject(new Error(`${name}: the socket failed`));
      ws.onclose = (event) => (client.closed = event.code);
      ws.onmessage = (event) => {
        client.frames.push(event.data);
        const frame = JSON.parse(event.data);
        void onFrame(client, frame).catch((err: unknown) => client.frames.push(JSON.stringify({ pageError: String(err) })));
      };
    });

  /** Subscribes to (or drops) each stream a participant's `media` shows, as the app's updateMedia does. */
  function followPeer(client: any, participant: any): void {
    for (const type of ['video', 'screen']) {
      const key = `${participant.id}:${type}`;
      const shown = participant.media?.[type] !== undefined;
      if (shown && !client.subscribers[key]) {
        client.subscribers[key] = { pending: true };
        client.sendMedia({ action: 'subscribe', target: participant.id, media_session_type: type });
      }
      if (!shown && client.subscribers[key]) {
        client.subscribers[key].pc?.close();
        delete client.subscribers[key];
      }
    }
  }

  async function onFrame(client: any, frame: any): Promise<void> {
    const { namespace, payload } = frame;
    if (namespace === 'control') {
      if (payload.message === 'join_success') {
        client.id = payload.id;
        for (const participant of payload.participants) followPeer(client, participant);
      }
      if (payload.message === 'joined' || payload.message === 'update') followPeer(client, payload);
      if (payload.message === 'left') {
        for (const type of ['video', 'screen']) {
          client.subscribers[`${payload.id}:${type}`]?.pc?.close();
          delete client.subscribers[`${payload.id}:${type}`];
        }
      }
      return;
    }
    if (namespace !== 'media') return;
    const key = `${payload.source}:${payload.media_session_type}`;
    const own = payload.source === client.id;
    switch (payload.message) {
      case 'sdp_answer':
        return client.publishers[payload.media_session_type]?.pc.setRemoteDescription({ type: 'answer', sdp: payload.sdp });
      case 'sdp_offer':
        return answerOffer(client, payload);
      case 'sdp_candidate': {
        const pc = own ? client.publishers[payload.media_session_type]?.pc : client.subscribers[key]?.pc;
        return pc?.addIceCandidate({ candidate: payload.candidate.candidate, sdpMLineIndex: payload.candidate.sdpMLineIndex });
      }
      case 'media_status': {
        const publisher = own ? client.publishers[payload.media_session_type] : undefined;
        if (publisher && payload.receiving && !publisher.complete) {
          publisher.complete = true;
          client.sendMedia({
            action: 'publish_complete',
            media_session_type: payload.media_session_type,
            media_session_state: { audio: payload.media_session_type === 'video' && !client.muted, video: true, video_settings: 2 },
          });
        }
        return;
      }
      case 'request_mute':
      case 'force_mute_enabled':
        if (payload.message === 'force_mute_enabled' && (payload.allow_list.includes(client.id) || client.ignoresForceMute)) return;
        client.muted = true;
        return client.sendMedia({
          action: 'update_media_session',
          media_session_type: 'video',
          media_session_state: { audio: false, video: true, video_settings: 2 },
        });
      case 'presenter_revoked':
        return client.unpublish('screen');
    }
  }

  async function answerOffer(client: any, payload: any): Promise<void> {
    const key = `${payload.source}:${payload.media_session_type}`;
    const subscriber = (client.subscribers[key] ??= {});
    if (!subscriber.pc) {
      const pc = new RTCPeerConnection({ iceServers: [] });
      subscriber.pc = pc;
      pc.onicecandidate = ({ candidate }: { candidate: any }) =>
        client.sendMedia(
          candidate
            ? {
                action: 'sdp_candidate',
                target: payload.source,
                media_session_type: payload.media_session_type,
                candidate: { sdpMid: candidate.sdpMid, sdpMLineIndex: candidate.sdpMLineIndex, candidate: candidate.candidate },
              }
            : { action: 'sdp_end_of_candidates', target: payload.source, media_session_type: payload.media_session_type },
        );
    }
    await subscriber.pc.setRemoteDescription({ type: 'offer', sdp: payload.sdp });
    await subscriber.pc.setLocalDescription(await subscriber.pc.createAnswer());
    client.sendMedia({ action: 'sdp_answer', target: payload.source, media_session_type: payload.media_session_type, sdp: subscriber.pc.localDescription.sdp });
  }

  global.convenePublish = async (name: string, type: 'video' | 'screen') => {
    const client = clients[name];
    const stream =
      type === 'video'
        ? await navigator.mediaDevices.getUserMedia({ audio: true, video: { width: 640, height: 480 } })
        : await navigator.mediaDevices.getDisplayMedia({ video: true });
    const pc = new RTCPeerConnection({ iceServers: [] });
    client.publishers[type] = { pc, stream, complete: false };
    for (const track of stream.getTracks()) {
      const encodings =
        track.kind === 'video'
          ? [
              { rid: 'h', active: true, maxBitrate: 900_000 },
              { rid: 'm', active: true, maxBitrate: 300_000, scaleResolutionDownBy: 2 },
              { rid: 'l', active: true, maxBitrate: 100_000, scaleResolutionDownBy: 4 },
            ]
          : undefined;
      pc.addTransceiver(track, { direction: 'sendonly', streams: [stream], ...(encodings ? { sendEncodings: encodings } : {}) });
    }
    pc.onicecandidate = ({ candidate }: { candidate: any }) =>
      client.sendMedia(
        candidate
          ? {
              action: 'sdp_candidate',
              target: client.id,
              media_session_type: type,
              candidate: { sdpMid: candidate.sdpMid, sdpMLineIndex: candidate.sdpMLineIndex, candidate: candidate.candidate },
            }
          : { action: 'sdp_end_of_candidates', target: client.id, media_session_type: type },
      );
    await pc.setLocalDescription(await pc.createOffer());
    client.sendMedia({ action: 'publish', target: client.id, media_session_type: type, sdp: pc.localDescription.sdp });
  };

  global.conveneUnpublish = (name: string, type: string) => clients[name].unpublish(type);

  global.conveneSnapshot = async (name: string) => {
    const client = clients[name];
    const inbound: Record<string, { audioBytes: number; videoBytes: number; framesDecoded: number; frameWidth: number }> = {};
    for (const [key, subscriber] of Object.entries<any>(client.subscribers)) {
      if (!subscriber.pc) continue;
      const totals = { audioBytes: 0, videoBytes: 0, framesDecoded: 0, frameWidth: 0 };
      (await subscriber.pc.getStats()).forEach((report: any) => {
        if (report.type !== 'inbound-rtp') return;
        if (report.kind === 'audio') totals.audioBytes += report.bytesReceived ?? 0;
        if (report.kind === 'video') {
          totals.videoBytes += report.bytesReceived ?? 0;
          totals.framesDecoded += report.framesDecoded ?? 0;
          totals.frameWidth = Math.max(totals.frameWidth, report.frameWidth ?? 0);
        }
      });
      inbound[key] = totals;
    }
    const published = Object.fromEntries(Object.entries<any>(client.publishers).map(([type, publisher]) => [type, publisher.complete]));
    return { id: client.id, frames: client.frames, inbound, published, muted: client.muted, closed: client.closed };
  };
}

/** Makes `name`'s page a client that does not mute itself on `force_mute_enabled` (Convene must then). */
export const ignoreForceMute = (page: Page, name: string) =>
  page.evaluate((n) => {
    (globalThis as any).convene[n].ignoresForceMute = true;
  }, name);

/** Opens `name`'s socket in the page and joins; the page must have run installMediaClient. */
export async function openParticipant(page: Page, name: string, url: string, protocols: string[], displayName: string): Promise<void> {
  await page.evaluate(([n, u, p, d]) => (globalThis as any).conveneOpen(n, u, p, d), [name, url, protocols, displayName] as const);
}

export const publishFrom = (page: Page, name: string, type: 'video' | 'screen') =>
  page.evaluate(([n, t]) => (globalThis as any).convenePublish(n, t), [name, type] as const);

export const snapshotOf = (page: Page, name: string): Promise<MediaSnapshot> => page.evaluate((n) => (globalThis as any).conveneSnapshot(n), name);

/** The frames of one namespace and message the participant got so far (parsed). */
export function framesOf(snapshot: MediaSnapshot, namespace: string, message: string): any[] {
  return snapshot.frames.map((text) => JSON.parse(text)).filter((frame) => frame.namespace === namespace && frame.payload?.message === message);
}
