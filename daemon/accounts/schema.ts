/** Tables and columns added by migration 0100_accounts, merged into the store's Database type. */
import type { Role } from '../store/schema.js';

export interface TeamsTable {
  id: string;
  name: string;
  /** The name in NFC, lower-cased, unique: case variants are one name (migration 0790; NULL on older variants). */
  name_key: string | null;
  created_at: number;
}

export interface MfaRecoveryCodesTable {
  id: string;
  user_id: string;
  /** sha256 of the code: codes carry 80 random bits, so a fast hash cannot be brute-forced. */
  code_hash: string;
  used_at: number | null;
}

export interface MfaChallengesTable {
  /** sha256 of the mfaToken. */
  id: string;
  user_id: string;
  attempts: number;
  expires_at: number;
}

export interface LoginThrottleTable {
  key: string;
  failures: number;
  first_at: number;
  locked_until: number | null;
  /** Locks of a (username, address) pair so far: each next one lasts twice as long (migration 0600). */
  locks: number;
}

export interface SsoRequestsTable {
  id: string;
  kind: string;
  data: string;
  expires_at: number;
}

export interface AppSettingsTable {
  key: string;
  value: string;
  updated_at: number;
}

export interface AuditEventsTable {
  id: string;
  at: number;
  event: string;
  actor_id: string | null;
  actor_name: string | null;
  target: string | null;
  ip: string | null;
  details: string | null;
}

/** One row (id 1): bumped whenever a key, a user's standing or its sessions change, so caches in other processes notice. */
export interface CredentialsVersionTable {
  id: number;
  version: number;
}

declare module '../store/schema.js' {
  interface UsersTable {
    mfa_secret?: string | null;
    mfa_pending_secret?: string | null;
    mfa_last_step?: number | null;
    mfa_enabled?: number;
    sso_provider?: string | null;
    sso_subject?: string | null;
    /** 1: a service account (no password, no MFA; keys issued by an admin). Migration 0700. */
    service?: number;
    /** Set: the account may not sign in and its keys answer 401 owner-disabled. */
    disabled_at?: number | null;
    /** The lower-cased username, unique: case variants are one name (migration 0770; NULL on older variants). */
    username_key?: string | null;
  }
  interface ApiKeysTable {
    expires_at?: number | null;
    revoked_at?: number | null;
    /** A rotated-out secret: the id of the key that carries the new secret. */
    replaced_by?: string | null;
    /** A rotated-out secret works until then (API_KEY_ROTATE_GRACE_S after the rotation). */
    valid_until?: number | null;
  }
  interface Database {
    teams: TeamsTable;
    mfa_recovery_codes: MfaRecoveryCodesTable;
    mfa_challenges: MfaChallengesTable;
    login_throttle: LoginThrottleTable;
    sso_requests: SsoRequestsTable;
    app_settings: AppSettingsTable;
    audit_events: AuditEventsTable;
    credentials_version: CredentialsVersionTable;
  }
}

export const ROLE_RANK: Record<Role, number> = { user: 1, admin: 2 };
