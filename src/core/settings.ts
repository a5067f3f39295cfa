/**
 * Settings validation and introspection. One zod schema per tool gives the same errors on the CLI and
 * over HTTP, and its JSON Schema drives CLI flags, OpenAPI, completions and the man page.
 */
import { z } from 'zod';
import { KilnError, type FieldProblem } from './errors.js';
import { issuePhrase, respellAll } from './settings-words.js';
import type { Tool } from './tool.js';

export interface SettingInfo {
  name: string;
  /** kebab-case CLI flag without dashes. */
  flag: string;
  type: 'string' | 'number' | 'integer' | 'boolean' | 'array' | 'object';
  enum?: (string | number)[];
  min?: number;
  max?: number;
  exclusiveMin?: boolean;
  default?: unknown;
  required: boolean;
  description?: string;
  /** A password or key (declared with `secret()`): never shown back or kept in clear. */
  secret?: boolean;
}

/**
 * Declares a setting a secret: JSON Schema `writeOnly` (OpenAPI shows it as input only), and the daemon
 * redacts it wherever settings are shown or kept (job records, saved pipelines) and encrypts it at rest.
 */
export function secret<T extends z.ZodType>(schema: T): T {
  return schema.meta({ writeOnly: true }) as T;
}

/** Names of the tool's settings declared with `secret()`. */
export function secretSettingNames(tool: Tool): Set<string> {
  return new Set(
    describeSettings(tool)
      .filter((i) => i.secret)
      .map((i) => i.name),
  );
}

const schemaCache = new WeakMap<object, Record<string, unknown>>();

/** The tool's settings as JSON Schema (draft 2020-12, what OpenAPI 3.1 uses). */
export function settingsJsonSchema(tool: Tool): Record<string, unknown> {
  let s = schemaCache.get(tool.settings);
  if (!s) {
    s = z.toJSONSchema(tool.settings, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
    delete s.$schema;
    schemaCache.set(tool.settings, s);
  }
  return s;
}

export function kebab(name: string): string {
  return name.replace(/\./g, '-').replace(/[A-Z]/g, (c) => '-' + c.toLowerCase());
}

export function describeSettings(tool: Tool): SettingInfo[] {
  const js = settingsJsonSchema(tool) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  const required = new Set(js.required ?? []);
  return Object.entries(js.properties ?? {}).map(([name, p]) => {
    const prop = unwrap(p);
    const info: SettingInfo = {
      name,
      flag: kebab(name),
      type: jsonType(prop),
      required: required.has(name) && p.default === undefined,
      description: (p.description ?? prop.description) as string | undefined,
    };
    const en = prop.enum ?? (prop.const !== undefined ? [prop.const] : undefined);
    if (Array.isArray(en)) info.enum = en as (string | number)[];
    if (typeof prop.minimum === 'number') info.min = prop.minimum;
    if (typeof prop.exclusiveMinimum === 'number') {
      info.min = prop.exclusiveMinimum;
      info.exclusiveMin = true;
    }
    if (typeof prop.maximum === 'number') info.max = prop.maximum;
    const def = p.default ?? prop.default;
    if (def !== undefined) info.default = def;
    if (p.writeOnly === true || prop.writeOnly === true) info.secret = true;
    return info;
  });
}

function unwrap(p: Record<string, unknown>): Record<string, unknown> {
  // Optional/nullable wrappers come out as anyOf/oneOf: take the first non-null branch.
  const alts = (p.anyOf ?? p.oneOf) as Record<string, unknown>[] | undefined;
  if (alts) {
    const main = alts.find((a) => a.type !== 'null');
    if (main) return { ...main, ...Object.fromEntries(Object.entries(p).filter(([k]) => k !== 'anyOf' && k !== 'oneOf')) };
  }
  return p;
}

function jsonType(p: Record<string, unknown>): SettingInfo['type'] {
  const t = Array.isArray(p.type) ? (p.type as string[]).find((x) => x !== 'null') : (p.type as string | undefined);
  if (t === 'string' || t === 'number' || t === 'integer' || t === 'boolean' || t === 'array' || t === 'object') return t;
  if (Array.isArray(p.enum)) return typeof p.enum[0] === 'number' ? 'number' : 'string';
  return 'string';
}

/**
 * Validates raw settings (from JSON, flags or form fields) against the tool's schema and its check().
 * Unknown names are rejected, so a typo never passes silently.
 */
export function parseSettings(tool: Tool, raw: unknown): Record<string, unknown> {
  const input = raw === undefined || raw === null ? {} : raw;
  if (typeof input !== 'object' || Array.isArray(input)) {
    throw new KilnError('VALIDATION_ERROR', 'settings must be a JSON object.', {
      details: [{ path: 'settings', message: 'expected an object' }],
    });
  }
  const known = new Set(Object.keys(tool.settings.shape));
  const unknown = Object.keys(input).filter((k) => !known.has(k));
  if (unknown.length) {
    const problems: FieldProblem[] = unknown.map((k) => ({ path: k, message: `unknown setting${suggest(k, known)}` }));
    throw new KilnError(
      'VALIDATION_ERROR',
      `Unknown setting${unknown.length > 1 ? 's' : ''} for ${tool.id}: ${problems.map((p) => p.path + p.message.replace('unknown setting', '')).join(', ')}.`,
      {
        details: problems,
      },
    );
  }
  // `jpeg`, `white`, `00:01:30` are accepted where the schema says jpg, #rrggbb, 90 (settings-words.ts).
  const spelled = withImpliedModes(tool, respellAll(describeSettings(tool), input as Record<string, unknown>));
  const res = tool.settings.safeParse(spelled);
  if (!res.success) {
    // In the user's words: "left is required", not the validation library's "expected number, received undefined".
    const problems: FieldProblem[] = res.error.issues.map((i) => ({
      path: i.path.join('.') || 'settings',
      message: issuePhrase(i, spelled),
    }));
    throw new KilnError(
      'VALIDATION_ERROR',
      `Invalid settings for ${tool.id}: ${problems.map((p) => `${p.path} ${p.message}`).join('; ')}.`,
      {
        details: problems,
      },
    );
  }
  const settings = res.data as Record<string, unknown>;
  const msg = tool.check?.(settings);
  if (typeof msg === 'string' && msg) throw new KilnError('VALIDATION_ERROR', msg, { details: [{ path: 'settings', message: msg }] });
  return settings;
}

/** A mode's own setting given alone sets the mode (Tool.implies); given with another mode, it is refused. */
function withImpliedModes(tool: Tool, input: Record<string, unknown>): Record<string, unknown> {
  let out = input;
  for (const [setting, implied] of Object.entries(tool.implies ?? {})) {
    if (input[setting] === undefined) continue;
    for (const [key, value] of Object.entries(implied)) {
      if (input[key] === undefined) out = { ...out, [key]: value };
      else if (input[key] !== value)
        throw new KilnError(
          'VALIDATION_ERROR',
          `${setting} applies to ${key} ${value} only, not ${String(input[key])}: drop one of them.`,
          {
            details: [{ path: setting, message: `applies to ${key} ${value} only, not ${String(input[key])}` }],
          },
        );
    }
  }
  return out;
}

function suggest(name: string, known: Set<string>): string {
  const best = closestName(name, known);
  return best ? ` (did you mean ${best}?)` : '';
}

/** The candidate nearest to `name` by edit distance, if near enough to be a typo (for "did you mean"). */
export function closestName(name: string, candidates: Iterable<string>, maxDistance = 2): string | undefined {
  let best: string | undefined;
  let bestD = maxDistance + 1;
  for (const k of candidates) {
    const d = editDistance(name.toLowerCase(), k.toLowerCase());
    if (d < bestD) {
      bestD = d;
      best = k;
    }
  }
  return best;
}

export function editDistance(a: string, b: string): number {
  const dp = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)] as number[]);
  for (let j = 1; j <= b.length; j++) dp[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++)
      dp[i]![j] = Math.min(dp[i - 1]![j]! + 1, dp[i]![j - 1]! + 1, dp[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
  return dp[a.length]![b.length]!;
}

/**
 * Turns a string (CLI flag value, multipart text field) into the type the setting wants. The schema
 * still validates the result; this only undoes the "everything is a string" of those transports.
 */
export function coerceSettingValue(info: SettingInfo | undefined, value: string): unknown {
  const t = info?.type;
  if (t === 'number' || t === 'integer') {
    const n = Number(value);
    return value.trim() !== '' && Number.isFinite(n) ? n : value;
  }
  if (t === 'boolean') {
    if (/^(true|1|yes|on)$/i.test(value)) return true;
    if (/^(false|0|no|off)$/i.test(value)) return false;
    return value;
  }
  if (t === 'array' || t === 'object') {
    try {
      return JSON.parse(value);
    } catch {
      // A comma list is the natural way to type an array of strings on a command line.
      return t === 'array'
        ? value
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean)
        : value;
    }
  }
  if (info?.enum && typeof info.enum[0] === 'number') {
    const n = Number(value);
    return Number.isFinite(n) ? n : value;
  }
  return value;
}
