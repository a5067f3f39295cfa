/**
 * The instance settings record and branding, stored as JSON rows in app_settings so every instance on a
 * shared database sees the same values. The record keeps only what an admin set: a key set to null goes
 * back to its environment default (SYNC_WAIT_MS, OUTPUT_TTL_HOURS, MAX_UPLOAD_MB…). The limits among them
 * are read live (daemon/http/limits.ts), with per-team overrides in rows `team-limits:<teamId>`.
 */
import { type Kysely, PostgresAdapter } from 'kysely';
import { z } from 'zod';
import { KilnError } from '../../src/core/errors.js';
import type { DaemonConfig } from '../config.js';
import type { Database } from '../store/schema.js';

export const FEATURES = ['mfa', 'oidc', 'saml'] as const;
export type Feature = (typeof FEATURES)[number];

/** The limits a team may override; the rest of the record is server-wide. */
export interface Limits {
  /** Largest uploaded file, MB. */
  maxUploadMb: number;
  /** File library quota per user, MB (0 = none). */
  libraryQuotaMb: number;
  /** Job inputs and outputs a user may hold until swept, MB (0 = none). */
  userQuotaMb: number;
  /** Requests per minute per user (0 = no limit). */
  rateLimitPerMinute: number;
}
export const LIMIT_KEYS = [
  'maxUploadMb',
  'libraryQuotaMb',
  'userQuotaMb',
  'rateLimitPerMinute',
] as const satisfies readonly (keyof Limits)[];

export interface Settings extends Limits {
  syncWindowMs: number;
  /** How long finished outputs are kept. */
  outputTtlHours: number;
  /** How long finished job records are kept (at least as long as their outputs). */
  jobRecordTtlHours: number;
  /** How often the sweep of expired outputs, records and sessions runs. */
  sweepIntervalS: number;
  /** The old name of outputTtlHours, still read and written. */
  jobTtlHours: number;
  features: Record<Feature, boolean>;
  ssoDefaultRole: 'user' | 'admin';
}

/** The stored record: only what was set. */
type Stored = Partial<Omit<Settings, 'features' | 'jobTtlHours'>> & { features?: Partial<Record<Feature, boolean>>; jobTtlHours?: number };

const MAX_MB = 1024 * 1024;
const hours = (max: number) => z.number().min(0.01).max(max);
/** Each limit, or null for "back to the environment default". */
export const LimitsPatch = z
  .object({
    maxUploadMb: z.number().positive().max(MAX_MB).nullable(),
    libraryQuotaMb: z
      .number()
      .min(0)
      .max(MAX_MB * 1024)
      .nullable(),
    userQuotaMb: z
      .number()
      .min(0)
      .max(MAX_MB * 1024)
      .nullable(),
    rateLimitPerMinute: z.number().int().min(0).max(1_000_000).nullable(),
  })
  .partial()
  .strict();

export const SettingsPatch = LimitsPatch.extend({
  syncWindowMs: z.number().int().min(0).max(600_000),
  outputTtlHours: hours(24 * 365).nullable(),
  jobRecordTtlHours: hours(24 * 3650).nullable(),
  sweepIntervalS: z.number().int().min(10).max(86_400).nullable(),
  jobTtlHours: hours(24 * 365).nullable(),
  features: z
    .object(Object.fromEntries(FEATURES.map((f) => [f, z.boolean()])) as Record<Feature, z.ZodBoolean>)
    .partial()
    .strict(),
  ssoDefaultRole: z.enum(['user', 'admin']),
})
  .partial()
  .strict();

const num = { type: 'number' };
const nullableNum = (description: string, minimum = 0) => ({ type: ['number', 'null'], minimum, description });
/** JSON Schema of the record as answered (daemon/accounts/openapi.ts). */
export const SETTINGS_SCHEMA = {
  type: 'object',
  properties: {
    syncWindowMs: { type: 'integer', minimum: 0 },
    outputTtlHours: { ...num, description: 'How long finished outputs are kept (OUTPUT_TTL_HOURS).' },
    jobRecordTtlHours: { ...num, description: 'How long finished job records are kept, at least outputTtlHours (JOB_RECORD_TTL_HOURS).' },
    sweepIntervalS: { type: 'integer', description: 'How often expired outputs, records and sessions are swept (SWEEP_INTERVAL_S).' },
    jobTtlHours: { ...num, description: 'Old name of outputTtlHours.' },
    maxUploadMb: { ...num, description: 'Largest uploaded file (MAX_UPLOAD_MB); a team may override it.' },
    libraryQuotaMb: { ...num, description: 'File library quota per user, 0 = none (LIBRARY_QUOTA_MB); a team may override it.' },
    userQuotaMb: { ...num, description: 'Job storage per user, 0 = none (USER_QUOTA_MB); a team may override it.' },
    rateLimitPerMinute: { ...num, description: 'Requests per minute per user, 0 = off (RATE_LIMIT_PER_MINUTE); a team may override it.' },
    features: {
      type: 'object',
      properties: Object.fromEntries(FEATURES.map((f) => [f, { type: 'boolean' }])),
    },
    ssoDefaultRole: { type: 'string', enum: ['user', 'admin'] },
  },
};
/** The body of PUT /api/v1/settings: any of the keys; a limit or TTL set to null goes back to its default. */
export const SETTINGS_PATCH_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...SETTINGS_SCHEMA.properties,
    ...Object.fromEntries(
      ['outputTtlHours', 'jobRecordTtlHours', 'sweepIntervalS', 'jobTtlHours', ...LIMIT_KEYS].map((k) => [
        k,
        nullableNum(
          `${(SETTINGS_SCHEMA.properties as Record<string, { description?: string }>)[k]?.description ?? ''} null: back to the default.`,
        ),
      ]),
    ),
  },
};
/** Team overrides: each limit, or null to follow the server value. */
export const TEAM_LIMITS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: Object.fromEntries(LIMIT_KEYS.map((k) => [k, nullableNum(`${k} for the team's members; null: the server value.`)])),
};

const HEX = /^#[0-9a-fA-F]{6}$/;
export const BrandingPatch = z
  .object({
    productName: z.string().trim().min(1).max(60),
    colors: z
      .object({ primary: z.string().regex(HEX), accent: z.string().regex(HEX), background: z.string().regex(HEX) })
      .partial()
      .strict(),
  })
  .partial()
  .strict();

export interface Branding {
  productName: string;
  colors: { primary: string; accent: string; background: string };
  logoUrl: string | null;
}

export const LOGO_MAX_BYTES = 512 * 1024;
export const LOGO_TYPES = ['image/png', 'image/jpeg', 'image/webp'] as const;

async function readRow<T>(db: Kysely<Database>, key: string): Promise<T | undefined> {
  const r = await db.selectFrom('app_settings').select('value').where('key', '=', key).executeTakeFirst();
  return r ? (JSON.parse(r.value) as T) : undefined;
}

async function writeRow(db: Kysely<Database>, key: string, value: unknown): Promise<void> {
  const row = { key, value: JSON.stringify(value), updated_at: Date.now() };
  await db
    .insertInto('app_settings')
    .values(row)
    .onConflict((oc) => oc.column('key').doUpdateSet({ value: row.value, updated_at: row.updated_at }))
    .execute();
}

async function readStored(db: Kysely<Database>): Promise<Stored> {
  const stored = (await readRow<Stored>(db, 'settings')) ?? {};
  // Records written before outputTtlHours existed keep the old name.
  if (stored.outputTtlHours === undefined && stored.jobTtlHours !== undefined) stored.outputTtlHours = stored.jobTtlHours;
  delete stored.jobTtlHours;
  return stored;
}

/** The record with the environment's values where nothing is set. */
function resolve(stored: Stored, config: DaemonConfig): Settings {
  const outputTtlHours = stored.outputTtlHours ?? config.outputTtlHours;
  return {
    syncWindowMs: stored.syncWindowMs ?? config.syncWaitMs,
    outputTtlHours,
    jobRecordTtlHours: stored.jobRecordTtlHours ?? Math.max(config.jobRecordTtlHours, outputTtlHours),
    sweepIntervalS: stored.sweepIntervalS ?? config.sweepIntervalS,
    jobTtlHours: outputTtlHours,
    maxUploadMb: stored.maxUploadMb ?? config.maxUploadMb,
    libraryQuotaMb: stored.libraryQuotaMb ?? config.libraryQuotaMb,
    userQuotaMb: stored.userQuotaMb ?? config.userQuotaMb,
    rateLimitPerMinute: stored.rateLimitPerMinute ?? config.rateLimitPerMinute,
    features: { mfa: true, oidc: true, saml: true, ...stored.features },
    ssoDefaultRole: stored.ssoDefaultRole ?? 'user',
  };
}

export async function getSettings(db: Kysely<Database>, config: DaemonConfig): Promise<Settings> {
  return resolve(await readStored(db), config);
}

/** Applies stored overrides to the running configuration (at start and after each write). */
export function applySettings(config: DaemonConfig, s: Settings): void {
  config.syncWaitMs = s.syncWindowMs;
}

function validation(e: z.ZodError): KilnError {
  const details = e.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  return new KilnError('VALIDATION_ERROR', `Invalid body: ${details.map((d) => `${d.path || '(body)'}: ${d.message}`).join('; ')}`, {
    details,
  });
}

function invalid(path: string, message: string): KilnError {
  return new KilnError('VALIDATION_ERROR', `Invalid body: ${path}: ${message}`, { details: [{ path, message }] });
}

export async function updateSettings(
  db: Kysely<Database>,
  config: DaemonConfig,
  body: unknown,
): Promise<{ settings: Settings; changed: string[] }> {
  const p = SettingsPatch.safeParse(body ?? {});
  if (!p.success) throw validation(p.error);
  const { jobTtlHours, features, ...patch } = p.data;
  if (jobTtlHours !== undefined) {
    if (patch.outputTtlHours !== undefined) throw invalid('jobTtlHours', 'the old name of outputTtlHours: send one of the two');
    patch.outputTtlHours = jobTtlHours;
  }
  const next: Stored = await readStored(db);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete next[k as keyof Stored];
    else (next as Record<string, unknown>)[k] = v;
  }
  if (features) next.features = { ...next.features, ...features };
  const settings = resolve(next, config);
  // A record removed takes its output with it: records must outlive outputs.
  if (settings.jobRecordTtlHours < settings.outputTtlHours)
    throw invalid('jobRecordTtlHours', `must be at least outputTtlHours (${settings.outputTtlHours})`);
  await writeRow(db, 'settings', next);
  applySettings(config, settings);
  return { settings, changed: Object.keys(p.data) };
}

/** The app_settings row of a team's overrides: keyed by the team id, so it is deleted with the team (teams.ts). */
export function teamLimitsKey(teamId: string): string {
  return `team-limits:${teamId}`;
}

/** A team's overrides (only the limits it sets). */
export async function getTeamLimits(db: Kysely<Database>, teamId: string): Promise<Partial<Limits>> {
  return (await readRow<Partial<Limits>>(db, teamLimitsKey(teamId))) ?? {};
}

/** Every team's overrides, by team id (what the live limits cache holds). */
export async function allTeamLimits(db: Kysely<Database>): Promise<Map<string, Partial<Limits>>> {
  const rows = await db.selectFrom('app_settings').select(['key', 'value']).where('key', 'like', 'team-limits:%').execute();
  return new Map(rows.map((r) => [r.key.slice('team-limits:'.length), JSON.parse(r.value) as Partial<Limits>]));
}

/** Sets or clears (null) a team's overrides; the row goes when nothing is left. NOT_FOUND without the team. */
export async function updateTeamLimits(db: Kysely<Database>, teamId: string, body: unknown): Promise<Partial<Limits>> {
  const p = LimitsPatch.safeParse(body ?? {});
  if (!p.success) throw validation(p.error);
  return db.transaction().execute(async (tx) => {
    // Checked in the transaction that writes, the team row locked on PostgreSQL (SQLite has one writer):
    // a team deleted meanwhile (teams.ts) never gets a limits row written after its own went.
    let team = tx.selectFrom('teams').select('id').where('id', '=', teamId);
    if (tx.getExecutor().adapter instanceof PostgresAdapter) team = team.forUpdate();
    if (!(await team.executeTakeFirst())) throw new KilnError('NOT_FOUND', `No team ${teamId}.`);
    const next: Partial<Limits> = await getTeamLimits(tx, teamId);
    for (const [k, v] of Object.entries(p.data)) {
      if (v === null) delete next[k as keyof Limits];
      else next[k as keyof Limits] = v;
    }
    if (Object.keys(next).length === 0) await tx.deleteFrom('app_settings').where('key', '=', teamLimitsKey(teamId)).execute();
    else await writeRow(tx, teamLimitsKey(teamId), next);
    return next;
  });
}

export async function featureEnabled(db: Kysely<Database>, config: DaemonConfig, f: Feature): Promise<boolean> {
  return (await getSettings(db, config)).features[f];
}

export async function requireFeature(db: Kysely<Database>, config: DaemonConfig, f: Feature): Promise<void> {
  if (!(await featureEnabled(db, config, f)))
    throw new KilnError('FEATURE_DISABLED', `The ${f} feature is switched off in the settings (PUT /api/v1/settings features.${f}).`, {
      details: { feature: f },
    });
}

export async function getBranding(db: Kysely<Database>): Promise<Branding> {
  const b = (await readRow<Partial<Omit<Branding, 'logoUrl'>>>(db, 'branding')) ?? {};
  const logo = await db.selectFrom('app_settings').select('updated_at').where('key', '=', 'branding.logo').executeTakeFirst();
  return {
    productName: b.productName ?? 'kiln',
    colors: { primary: '#d9480f', accent: '#1c7ed6', background: '#ffffff', ...b.colors },
    // The version parameter busts browser caches after a new upload.
    logoUrl: logo ? `/api/v1/branding/logo?v=${Number(logo.updated_at)}` : null,
  };
}

export async function updateBranding(db: Kysely<Database>, body: unknown): Promise<Branding> {
  const p = BrandingPatch.safeParse(body ?? {});
  if (!p.success) throw validation(p.error);
  const cur = await getBranding(db);
  await writeRow(db, 'branding', { productName: p.data.productName ?? cur.productName, colors: { ...cur.colors, ...p.data.colors } });
  return getBranding(db);
}

export async function saveLogo(db: Kysely<Database>, data: Buffer): Promise<string> {
  if (data.length === 0) throw new KilnError('VALIDATION_ERROR', 'The logo file is empty.');
  if (data.length > LOGO_MAX_BYTES)
    throw new KilnError('LIMIT_EXCEEDED', `The logo is ${data.length} bytes; the limit is ${LOGO_MAX_BYTES} bytes (512 KB).`);
  const { fileTypeFromBuffer } = await import('file-type');
  const t = await fileTypeFromBuffer(data);
  // SVG is refused: it can carry scripts, and the logo is served to every visitor.
  if (!t || !(LOGO_TYPES as readonly string[]).includes(t.mime)) {
    throw new KilnError('UNSUPPORTED_INPUT', `The logo must be PNG, JPEG or WebP (got ${t?.mime ?? 'an unrecognised type'}).`);
  }
  const { default: sharp } = await import('sharp');
  const meta = await sharp(data)
    .metadata()
    .catch(() => undefined);
  if (!meta?.width || !meta.height) throw new KilnError('UNSUPPORTED_INPUT', 'The logo image is corrupt.');
  if (meta.width > 4096 || meta.height > 4096)
    throw new KilnError('LIMIT_EXCEEDED', `The logo is ${meta.width}×${meta.height}; at most 4096×4096.`);
  await writeRow(db, 'branding.logo', { contentType: t.mime, data: data.toString('base64') });
  return t.mime;
}

export async function readLogo(db: Kysely<Database>): Promise<{ contentType: string; data: Buffer } | undefined> {
  const r = await readRow<{ contentType: string; data: string }>(db, 'branding.logo');
  return r ? { contentType: r.contentType, data: Buffer.from(r.data, 'base64') } : undefined;
}

export async function deleteLogo(db: Kysely<Database>): Promise<boolean> {
  const r = await db.deleteFrom('app_settings').where('key', '=', 'branding.logo').executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
