/**
 * The users domain's own types. `User` is what the rest of the service holds of a registered user
 * (the HTTP layer's caller, a room's owner …); the profile types are the contract's shapes
 * (the contract) that responses carry. Database rows never leave this folder.
 */

import type { components } from '../../../generated/openapi.js';

export const TARIFF_STATUSES = ['default', 'paid', 'downgraded'] as const;
export type TariffStatus = (typeof TARIFF_STATUSES)[number];

export interface User {
  id: string;
  oidc_issuer: string;
  oidc_sub: string;
  email: string;
  title: string;
  firstname: string;
  lastname: string;
  display_name: string;
  avatar_url: string;
  language: string;
  dashboard_theme: string;
  conference_theme: string;
  /** null: the configured default tariff. */
  tariff_name: string | null;
  tariff_status: TariffStatus;
  /** Expiry of the ID token of the last login. */
  id_token_exp: Date | null;
}

type Schemas = components['schemas'];

/** The contract's shapes, straight from the generated types so the domain cannot drift from the spec. */
export type PublicUserProfile = Schemas['PublicUserProfile'];
export type CurrentUser = Schemas['CurrentUser'] & { tariff_status: TariffStatus; used_storage: number };
/** The body of `PATCH /users/me`; limits are the contract's and enforced by the HTTP layer. */
export type UserPatch = Pick<Schemas['PatchMe'], 'title' | 'display_name' | 'language' | 'dashboard_theme' | 'conference_theme'>;

/** A find-users result: a registered user, or (with `users_find_use_kc`) one only the IdP knows. */
export type FoundUser =
  ({ kind: 'registered' } & PublicUserProfile) | { kind: 'unregistered'; email: string; firstname: string; lastname: string; avatar_url: string };

/** The columns of a public profile: what other users may see of someone (selected by the invitee view). */
export const PUBLIC_PROFILE_FIELDS = [
  'id',
  'email',
  'title',
  'firstname',
  'lastname',
  'display_name',
  'avatar_url',
] as const satisfies readonly (keyof PublicUserProfile)[];

/** Only the public fields, whatever else `user` (a User, a joined row) carries. */
export function toPublicProfile(user: PublicUserProfile): PublicUserProfile {
  return {
    id: user.id,
    email: user.email,
    title: user.title,
    firstname: user.firstname,
    lastname: user.lastname,
    display_name: user.display_name,
    avatar_url: user.avatar_url,
  };
}

export const isTariffStatus = (value: unknown): value is TariffStatus => (TARIFF_STATUSES as readonly unknown[]).includes(value);
