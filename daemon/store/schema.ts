/**
 * Table types of the record store. Timestamps are epoch milliseconds (bigint columns, read back as
 * numbers on both databases), JSON is stored as text, booleans as 0/1 integers: the one representation
 * that SQLite and PostgreSQL share, so one set of queries serves both.
 *
 * Other modules add their tables by declaration merging:
 *   declare module '../store/schema.js' { interface Database { teams: TeamsTable } }
 * and append a migration to MIGRATIONS (migrations.ts).
 */
import type { Generated } from 'kysely';

export type Role = 'admin' | 'user';

export interface UsersTable {
  id: string;
  username: string;
  password_hash: string | null;
  role: Role;
  team_id: string | null;
  created_at: number;
  updated_at: number;
}

export interface SessionsTable {
  /** sha256 of the token; the token itself is never stored. */
  id: string;
  user_id: string;
  created_at: number;
  expires_at: number;
}

export interface ApiKeysTable {
  id: string;
  user_id: string;
  name: string;
  /** The first hex characters after `si_`: not secret, lets verification find its row without a scan. */
  prefix: string;
  key_hash: string;
  created_at: number;
  last_used_at: number | null;
}

export const JOB_STATUSES = ['queued', 'running', 'completed', 'failed', 'cancelled'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];

export interface JobsTable {
  id: string;
  owner_id: string;
  /** Tool or preset id as called. */
  tool: string;
  /** The base tool actually run (differs from `tool` for presets). */
  base_tool: string;
  kind: 'run' | 'batch';
  settings: string;
  status: JobStatus;
  progress: number;
  stage: string | null;
  result: string | null;
  error: string | null;
  client_job_id: string | null;
  /** The daemon instance that owns the run (restart recovery only touches its own jobs). */
  instance_id: string;
  work_dir: string | null;
  output_path: string | null;
  output_name: string | null;
  content_type: string | null;
  original_size: number | null;
  processed_size: number | null;
  created_at: number;
  started_at: number | null;
  finished_at: number | null;
}

/**
 * What each owner's ended jobs hold in outputs (the quota's reading), kept by triggers on `jobs`
 * (migration 0800_job_held_bytes); no code writes it.
 */
export interface JobHeldBytesTable {
  owner_id: string;
  /** A string from PostgreSQL (bigint). */
  bytes: number | string;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  api_keys: ApiKeysTable;
  jobs: JobsTable;
  job_held_bytes: JobHeldBytesTable;
}

/** Kept for callers that want auto-increment columns in their own tables. */
export type { Generated };
