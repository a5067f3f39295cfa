/**
 * The instance settings record and branding, stored as JSON rows in app_settings so every instance on a
 * shared database sees the same values. syncWindowMs and jobTtlHours override the environment defaults
 * (SYNC_WAIT_MS, JOB_TTL_HOURS) on the instance that loads or writes them.
 */
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { KilnError } from '../../src/core/errors.js';
import type { DaemonConfig } from '../config.js';
import type { Database } from '../store/schema.js';

export const FEATURES = ['mfa', 'oidc', 'saml'] as const;
export type Feature = (typeof FEATURES)[number];

export interface Settings {
  syncWindowMs: number;
  jobTtlHours: number;
  features: Record<Feature, boolean>;
  ssoDefaultRole: 'user' | 'admin';
}

export const SettingsPatch = z
  .object({
    syncWindowMs: z.number().int().min(0).max(600_000),
    jobTtlHours: z
      .number()
      .min(0.01)
      .max(24 * 365),
    features: z
      .object(Object.fromEntries(FEATURES.map((f) => [f, z.boolean()])) as Record<Feature, z.ZodBoolean>)
      .partial()
      .strict(),
    ssoDefaultRole: z.enum(['user', 'admin']),
  })
  .partial()
  .strict();

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

export async function getSettings(db: Kysely<Database>, config: DaemonConfig): Promise<Settings> {
  const stored = (await readRow<Partial<Settings>>(db, 'settings')) ?? {};
  return {
    syncWindowMs: stored.syncWindowMs ?? config.syncWaitMs,
    jobTtlHours: stored.jobTtlHours ?? config.jobTtlHours,
    features: { mfa: true, oidc: true, saml: true, ...stored.features },
    ssoDefaultRole: stored.ssoDefaultRole ?? 'user',
  };
}

/** Applies stored overrides to the running configuration (at start and after each write). */
export function applySettings(config: DaemonConfig, s: Settings): void {
  config.syncWaitMs = s.syncWindowMs;
  config.jobTtlHours = s.jobTtlHours;
}

function validation(e: z.ZodError): KilnError {
  const details = e.issues.map((i) => ({ path: i.path.join('.'), message: i.message }));
  return new KilnError('VALIDATION_ERROR', `Invalid body: ${details.map((d) => `${d.path || '(body)'}: ${d.message}`).join('; ')}`, {
    details,
  });
}

export async function updateSettings(
  db: Kysely<Database>,
  config: DaemonConfig,
  body: unknown,
): Promise<{ settings: Settings; changed: string[] }> {
  const p = SettingsPatch.safeParse(body ?? {});
  if (!p.success) throw validation(p.error);
  const cur = await getSettings(db, config);
  const next: Settings = { ...cur, ...p.data, features: { ...cur.features, ...p.data.features } } as Settings;
  await writeRow(db, 'settings', next);
  applySettings(config, next);
  return { settings: next, changed: Object.keys(p.data) };
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
