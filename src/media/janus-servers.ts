/**
 * The Janus servers of `[media] janus_urls` as one MediaServers (media-servers.ts): one
 * JanusConnection (janus/connection.ts) per server, each with this instance's one Janus session on
 * it, and how busy each is here (its handles), so that a new room goes to the least busy server up.
 */
import type { Config } from '../config/schema.js';
import type { Logger } from '../logger.js';
import { JanusConnection } from './janus/connection.js';
import type { JanusHandle, JanusHandleEvent, TrickleCandidate } from './janus/handle.js';
import type { MediaHandle, MediaHandleEvent, MediaServers, MediaStatus } from './media-servers.js';

interface Server {
  readonly url: string;
  readonly connection: JanusConnection;
  /** Handles attached through this instance and not yet detached or lost (a lost server's handles each hear `lost`). */
  handles: number;
}

/**
 * Connects to every server (in parallel; one that does not answer is tried again in the background)
 * and logs plainly whether media works. Never throws for a server that is down: a meeting goes on
 * without audio and video.
 */
export async function startJanusServers(config: Config['media'], logger: Logger): Promise<MediaServers> {
  const log = logger.child({ component: 'media' });
  const servers = new Map<string, Server>(
    config.janus_urls.map((url) => [
      url,
      {
        url,
        handles: 0,
        connection: new JanusConnection({ url, logger, keepaliveMs: config.keepalive_interval_ms, requestTimeoutMs: config.request_timeout_ms }),
      },
    ]),
  );
  await Promise.all([...servers.values()].map((server) => server.connection.connect().catch(() => undefined)));
  const up = [...servers.values()].filter((server) => server.connection.state === 'up').map((server) => server.url);
  if (up.length === 0) {
    log.error({ servers: config.janus_urls }, 'media: no Janus server answers; audio and video are off until one does (/ready says media: down)');
  } else {
    log.info({ up, servers: config.janus_urls }, 'media: Janus servers up');
  }
  return janusServers(servers);
}

function janusServers(servers: Map<string, Server>): MediaServers {
  const serverOf = (url: string): Server => {
    const server = servers.get(url);
    if (!server) throw new Error(`media: ${url} is not one of [media] janus_urls`);
    return server;
  };
  const isUp = (url: string) => servers.get(url)?.connection.state === 'up';

  return {
    available: () =>
      [...servers.values()]
        .filter((server) => server.connection.state === 'up')
        .sort((a, b) => a.handles - b.handles)
        .map((server) => server.url),
    isUp,
    async attach(url, listener) {
      const server = serverOf(url);
      let counted = true;
      const uncount = () => {
        if (counted) server.handles--;
        counted = false;
      };
      server.handles++;
      try {
        const handle = await server.connection.attach((event) => {
          const translated = translate(event);
          if (translated === undefined) return;
          if (translated.type === 'detached' || translated.type === 'lost') uncount();
          listener(translated);
        });
        return mediaHandle(handle, uncount);
      } catch (err) {
        uncount();
        throw err;
      }
    },
    // a handle for the one request: a room without participants leaves no handle in Janus
    async roomRequest(url, body) {
      const handle = await serverOf(url).connection.attach(() => undefined);
      try {
        return (await handle.request(body)).data;
      } finally {
        await handle.detach().catch(() => undefined);
      }
    },
    status: (): MediaStatus => (servers.size === 0 ? 'not_configured' : [...servers.keys()].some(isUp) ? 'up' : 'down'),
    async close() {
      await Promise.all([...servers.values()].map((server) => server.connection.close()));
    },
  };
}

function mediaHandle(handle: JanusHandle, uncount: () => void): MediaHandle {
  return {
    request: (body, jsep) => handle.request(body, jsep && { type: jsep.type, sdp: jsep.sdp }),
    trickle: (candidate) => handle.trickle(candidate),
    async detach() {
      uncount();
      await handle.detach();
    },
  };
}

/** The events the media module acts on; plugin events and unknown media kinds are not among them. */
function translate(event: JanusHandleEvent): MediaHandleEvent | undefined {
  switch (event.type) {
    case 'media':
      return event.kind === 'audio' || event.kind === 'video' ? { type: 'media', kind: event.kind, receiving: event.receiving } : undefined;
    case 'slowlink':
      return { type: 'slowlink', uplink: event.uplink };
    case 'trickle':
      return trickled(event.candidate);
    case 'plugin':
      return undefined;
    default:
      return { type: event.type };
  }
}

function trickled(candidate: TrickleCandidate): MediaHandleEvent | undefined {
  if ('completed' in candidate) return { type: 'trickle', candidate: { completed: true } };
  if (typeof candidate.sdpMLineIndex !== 'number') return undefined;
  return { type: 'trickle', candidate: { sdpMLineIndex: candidate.sdpMLineIndex, candidate: candidate.candidate } };
}
