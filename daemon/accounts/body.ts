/** Small readers for JSON request bodies, with the VALIDATION_ERROR shape every route uses. */
import { KilnError } from '../../src/core/errors.js';

export function bodyObject(body: unknown): Record<string, unknown> {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) throw new KilnError('VALIDATION_ERROR', 'The body must be a JSON object.');
  return body as Record<string, unknown>;
}

export function str(body: Record<string, unknown>, name: string, max = 1000): string {
  const v = body[name];
  if (typeof v !== 'string' || v.length === 0)
    throw new KilnError('VALIDATION_ERROR', `${name} is required (a string).`, { details: [{ path: name, message: 'required' }] });
  if (v.length > max)
    throw new KilnError('VALIDATION_ERROR', `${name} is longer than ${max} characters.`, {
      details: [{ path: name, message: 'too long' }],
    });
  return v;
}

export function optStr(body: Record<string, unknown>, name: string, max = 1000): string | undefined {
  return body[name] === undefined || body[name] === null || body[name] === '' ? undefined : str(body, name, max);
}

/**
 * Refuses fields the route does not know: a typo ("rol": "admin") must not be ignored silently and the
 * action done without it.
 */
export function onlyFields(body: Record<string, unknown>, allowed: readonly string[], where: string): void {
  for (const k of Object.keys(body))
    if (!allowed.includes(k))
      throw new KilnError('VALIDATION_ERROR', `Unknown field ${k}: ${where} takes only ${allowed.join(', ')}.`, {
        details: [{ path: k, message: 'unknown' }],
      });
}

/**
 * Direction overrides and isolates (which display "abc<RLO>fed" as "abcdef" and reorder the columns
 * after it) and invisible characters (zero-width space, word joiner, BOM): a name holding them reads
 * as another name. Joiners (ZWJ, ZWNJ) stay: scripts and emoji sequences need them.
 */
const DECEPTIVE = /[\u061c\u200b\u200e\u200f\u202a-\u202e\u2060\u2066-\u2069\ufeff]/;

/**
 * A name people read in lists (an API key's, a team's): trimmed, not blank, and without control
 * characters, which would let one user write terminal escapes or fake lines into an admin's
 * `kiln keys list`, nor direction overrides or invisible characters. Stored in Unicode NFC, so "é"
 * typed as one character or as "e" and a combining accent is one name.
 */
export function label(body: Record<string, unknown>, name: string, max: number): string {
  const v = str(body, name, max).normalize('NFC').trim();
  if (!v) throw new KilnError('VALIDATION_ERROR', `${name} must not be blank.`, { details: [{ path: name, message: 'blank' }] });
  if (/[\u0000-\u001f\u007f-\u009f]/.test(v))
    throw new KilnError('VALIDATION_ERROR', `${name} must not contain control characters (line breaks, escapes).`, {
      details: [{ path: name, message: 'control characters' }],
    });
  if (DECEPTIVE.test(v))
    throw new KilnError(
      'VALIDATION_ERROR',
      `${name} must not contain direction overrides or invisible characters (it would read as another name).`,
      {
        details: [{ path: name, message: 'invisible or direction characters' }],
      },
    );
  return v;
}
