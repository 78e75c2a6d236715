/**
 * Who is a presenter (may share a screen without being a moderator). The room has a default,
 * `[media] screen_share_requires_permission`: off (the reference's default), everyone is one until a
 * moderator revokes it; on, nobody is until a moderator grants it. The store keeps only the
 * exceptions to the default (its presenter set), so that a participant's role is known from its
 * first read, with nothing written at its join.
 */
import type { MediaStore } from './media-store.js';

export interface PresenterRule {
  /** Whether a participant is a presenter, from whether the store's presenter set holds it. */
  fromStoredFlag(inSet: boolean): boolean;
  /** Which of `ids` are presenters. */
  presenters(roomId: string, ids: readonly string[]): Promise<Set<string>>;
  /** Makes `ids` presenters; answers those that were not. */
  grant(roomId: string, ids: readonly string[]): Promise<string[]>;
  /** Takes the role from `ids`; answers those that had it. */
  revoke(roomId: string, ids: readonly string[]): Promise<string[]>;
}

export function presenterRule(store: MediaStore, requiresPermission: boolean): PresenterRule {
  if (requiresPermission) {
    return {
      fromStoredFlag: (inSet) => inSet,
      presenters: (roomId, ids) => store.presenters(roomId, ids),
      grant: (roomId, ids) => store.addPresenters(roomId, ids),
      revoke: (roomId, ids) => store.removePresenters(roomId, ids),
    };
  }
  // the set holds those whose role was revoked
  return {
    fromStoredFlag: (inSet) => !inSet,
    async presenters(roomId, ids) {
      const revoked = await store.presenters(roomId, ids);
      return new Set(ids.filter((id) => !revoked.has(id)));
    },
    grant: (roomId, ids) => store.removePresenters(roomId, ids),
    revoke: (roomId, ids) => store.addPresenters(roomId, ids),
  };
}
