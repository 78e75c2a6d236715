/**
 * The initial schema: users, rooms and everything a room carries (SIP, invite codes, streaming
 * targets, assets, bans), meetings (events, their exceptions, invitations and favorites) and the
 * e-mail outbox.
 *
 * Frozen in time: this file imports nothing from `src/`, and once released it never changes; later
 * changes are new migrations. One statement per query, as PGlite's extended protocol requires.
 *
 * Conventions: timestamps are `timestamptz` (never `timestamp`); enumerations are text with a CHECK;
 * everything a room carries goes with the room (ON DELETE CASCADE), and deleting an event deletes
 * its room (trigger below), so either delete removes the whole meeting.
 */
import { sql, type Kysely } from 'kysely';

const up_statements = [
  `create table users (
    id uuid primary key default gen_random_uuid(),
    oidc_issuer text not null,
    oidc_sub text not null,
    email text not null,
    title text not null default '',
    firstname text not null default '',
    lastname text not null default '',
    display_name text not null,
    avatar_url text not null default '',
    language text not null default 'en-US',
    dashboard_theme text not null default 'system',
    conference_theme text not null default 'system',
    tariff_name text,
    tariff_status text not null default 'default' check (tariff_status in ('default', 'paid', 'downgraded')),
    id_token_exp timestamptz,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    constraint users_oidc_subject_key unique (oidc_issuer, oidc_sub)
  )`,
  // e-mail invitations and user search compare addresses case-insensitively
  `create index users_email_lower_idx on users (lower(email))`,

  `create table rooms (
    id uuid primary key default gen_random_uuid(),
    created_by uuid not null references users (id) on delete cascade,
    created_at timestamptz not null default now(),
    password text,
    waiting_room boolean not null default false
  )`,
  `create index rooms_created_by_idx on rooms (created_by, created_at, id)`,

  `create table sip_configs (
    room_id uuid primary key references rooms (id) on delete cascade,
    sip_id char(10) not null check (sip_id ~ '^[0-9]{10}$'),
    password char(10) not null check (password ~ '^[0-9]{10}$'),
    lobby boolean not null default false,
    constraint sip_configs_sip_id_key unique (sip_id)
  )`,

  `create table room_invites (
    code uuid primary key default gen_random_uuid(),
    room_id uuid not null references rooms (id) on delete cascade,
    created_by uuid not null references users (id) on delete cascade,
    created_at timestamptz not null default now(),
    updated_by uuid not null references users (id) on delete cascade,
    updated_at timestamptz not null default now(),
    active boolean not null default true,
    expiration timestamptz
  )`,
  `create index room_invites_room_idx on room_invites (room_id, created_at, code)`,

  `create table streaming_targets (
    id uuid primary key default gen_random_uuid(),
    room_id uuid not null references rooms (id) on delete cascade,
    name text not null,
    kind text not null default 'custom' check (kind in ('custom')),
    streaming_endpoint text not null,
    streaming_key text not null,
    public_url text not null,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now()
  )`,
  `create index streaming_targets_room_idx on streaming_targets (room_id, created_at, id)`,

  // the bytes live behind the storage interface under storage_key; deleting rows does not delete them
  `create table assets (
    id uuid primary key default gen_random_uuid(),
    room_id uuid not null references rooms (id) on delete cascade,
    filename text not null,
    namespace text,
    kind text,
    content_type text not null default 'application/octet-stream',
    size bigint not null check (size >= 0),
    storage_key text not null,
    created_at timestamptz not null default now(),
    constraint assets_storage_key_key unique (storage_key)
  )`,
  `create index assets_room_idx on assets (room_id, created_at, id)`,

  `create table room_bans (
    room_id uuid not null references rooms (id) on delete cascade,
    user_id uuid not null references users (id) on delete cascade,
    created_by uuid not null references users (id) on delete cascade,
    created_at timestamptz not null default now(),
    primary key (room_id, user_id)
  )`,

  // Times: starts_at/ends_at are the first occurrence's instants with the IANA zones they are meant
  // in; duration_secs = ends_at - starts_at; range_end = the end of the last occurrence (null for an
  // unbounded series), so that a time-range filter can compare starts_at and range_end alone.
  // A time-independent event has none of them.
  `create table events (
    id uuid primary key default gen_random_uuid(),
    room_id uuid not null references rooms (id) on delete cascade,
    created_by uuid not null references users (id) on delete cascade,
    created_at timestamptz not null default now(),
    updated_by uuid not null references users (id) on delete cascade,
    updated_at timestamptz not null default now(),
    title text not null,
    description text not null default '',
    is_time_independent boolean not null,
    is_all_day boolean,
    starts_at timestamptz,
    starts_at_tz text,
    ends_at timestamptz,
    ends_at_tz text,
    duration_secs integer check (duration_secs >= 0),
    recurrence_pattern text[] not null default '{}',
    range_end timestamptz,
    is_adhoc boolean not null default false,
    ical_sequence integer not null default 0,
    constraint events_room_id_key unique (room_id),
    constraint events_times_check check (
      case when is_time_independent then
        is_all_day is null and starts_at is null and starts_at_tz is null and ends_at is null
        and ends_at_tz is null and duration_secs is null and range_end is null and cardinality(recurrence_pattern) = 0
      else
        is_all_day is not null and starts_at is not null and starts_at_tz is not null and ends_at is not null
        and ends_at_tz is not null and duration_secs is not null
      end
    )
  )`,
  // GET /events: keyset order (starts_at nulls first, created_at, id) per creator
  `create index events_created_by_idx on events (created_by, starts_at nulls first, created_at, id)`,
  `create function events_delete_room() returns trigger language plpgsql as $$
    begin
      delete from rooms where id = old.room_id;
      return null;
    end
  $$`,
  `create trigger events_delete_room after delete on events
    for each row execute function events_delete_room()`,

  // One row per changed or cancelled occurrence; instance_start is the original occurrence's UTC start.
  `create table event_exceptions (
    event_id uuid not null references events (id) on delete cascade,
    instance_start timestamptz not null,
    status text not null default 'ok' check (status in ('ok', 'cancelled')),
    title text,
    description text,
    is_all_day boolean,
    starts_at timestamptz,
    starts_at_tz text,
    ends_at timestamptz,
    ends_at_tz text,
    created_by uuid not null references users (id) on delete cascade,
    created_at timestamptz not null default now(),
    updated_at timestamptz not null default now(),
    primary key (event_id, instance_start),
    constraint event_exceptions_starts_at_check check ((starts_at is null) = (starts_at_tz is null)),
    constraint event_exceptions_ends_at_check check ((ends_at is null) = (ends_at_tz is null))
  )`,

  `create table event_invites (
    event_id uuid not null references events (id) on delete cascade,
    invitee uuid not null references users (id) on delete cascade,
    role text not null default 'user' check (role in ('user', 'moderator')),
    status text not null default 'pending' check (status in ('pending', 'accepted', 'tentative', 'declined')),
    created_by uuid not null references users (id) on delete cascade,
    created_at timestamptz not null default now(),
    primary key (event_id, invitee)
  )`,
  `create index event_invites_invitee_idx on event_invites (invitee, status)`,

  // Invitations of addresses that are not (yet) registered users; they become event_invites rows
  // when that address first logs in. room_invite_code: the code mailed to an external address.
  `create table event_email_invites (
    event_id uuid not null references events (id) on delete cascade,
    email text not null check (email = lower(email)),
    role text not null default 'guest' check (role in ('guest', 'user', 'moderator')),
    room_invite_code uuid references room_invites (code) on delete set null,
    created_by uuid not null references users (id) on delete cascade,
    created_at timestamptz not null default now(),
    primary key (event_id, email)
  )`,
  `create index event_email_invites_email_idx on event_email_invites (email)`,

  `create table event_favorites (
    user_id uuid not null references users (id) on delete cascade,
    event_id uuid not null references events (id) on delete cascade,
    created_at timestamptz not null default now(),
    primary key (user_id, event_id)
  )`,
  `create index event_favorites_event_idx on event_favorites (event_id)`,

  // Queued in the transaction of the change it reports; a worker sends and marks it. event_id has no
  // foreign key: a cancellation outlives its event.
  `create table email_outbox (
    id bigint generated always as identity primary key,
    created_at timestamptz not null default now(),
    kind text not null,
    event_id uuid,
    recipients text[] not null check (cardinality(recipients) > 0),
    subject text not null,
    text text not null,
    ics text,
    attempts integer not null default 0,
    next_attempt_at timestamptz not null default now(),
    sent_at timestamptz,
    last_error text
  )`,
  `create index email_outbox_due_idx on email_outbox (next_attempt_at) where sent_at is null`,
];

const down_statements = [
  `drop table email_outbox`,
  `drop table event_favorites`,
  `drop table event_email_invites`,
  `drop table event_invites`,
  `drop table event_exceptions`,
  `drop table events`,
  `drop function events_delete_room()`,
  `drop table room_bans`,
  `drop table assets`,
  `drop table streaming_targets`,
  `drop table room_invites`,
  `drop table sip_configs`,
  `drop table rooms`,
  `drop table users`,
];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of up_statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const statement of down_statements) await sql.raw(statement).execute(db);
}
