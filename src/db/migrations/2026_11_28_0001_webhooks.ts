/**
 * Webhooks (issue 20): subscriptions, the events queued for them (`webhook_messages`, written in the
 * transaction of the change they report, or once per signaling change thanks to `dedupe_key`), and
 * one delivery row per message and subscription (the outbox the delivery worker sends, and the
 * delivery log the API shows). `owner` null: an operator subscription (`convene webhooks add`),
 * which receives the events of every room and meeting.
 *
 * Frozen in time: this file imports nothing from `src/`. One statement per query (PGlite).
 */
import { sql, type Kysely } from 'kysely';

const up_statements = [
  `create table webhook_subscriptions (
    id uuid primary key,
    owner uuid references users (id) on delete cascade,
    url text not null,
    secret text not null,
    event_types text[] not null,
    description text,
    consecutive_failures integer not null default 0,
    paused_at timestamptz,
    created_at timestamptz not null default now()
  )`,
  `create index webhook_subscriptions_owner_idx on webhook_subscriptions (owner, created_at)`,
  `create table webhook_messages (
    id text primary key,
    type text not null,
    subject text not null,
    body text not null,
    dedupe_key text unique,
    created_at timestamptz not null default now()
  )`,
  `create table webhook_deliveries (
    id bigint generated always as identity primary key,
    message_id text not null references webhook_messages (id) on delete cascade,
    subscription_id uuid not null references webhook_subscriptions (id) on delete cascade,
    subject text not null,
    attempts integer not null default 0,
    next_attempt_at timestamptz not null default now(),
    delivered_at timestamptz,
    last_status_code integer,
    last_error text,
    created_at timestamptz not null default now()
  )`,
  `create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at) where delivered_at is null`,
  `create index webhook_deliveries_subject_idx on webhook_deliveries (subscription_id, subject, id) where delivered_at is null`,
  `create index webhook_deliveries_log_idx on webhook_deliveries (subscription_id, id)`,
];

const down_statements = [`drop table webhook_deliveries`, `drop table webhook_messages`, `drop table webhook_subscriptions`];

export async function up(db: Kysely<any>): Promise<void> {
  for (const statement of up_statements) await sql.raw(statement).execute(db);
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const statement of down_statements) await sql.raw(statement).execute(db);
}
