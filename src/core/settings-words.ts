/**
 * Settings in the user's words, both ways. In: the usual other spellings of a value are accepted before
 * the schema sees it — `jpeg` for `jpg`, a CSS colour name (`white`) for a colour, `HH:MM:SS[.mmm]` or
 * `MM:SS` for a number of seconds. Out: a validation problem reads "left is required", "quality must be
 * at most 100", never the validation library's wording.
 */
import type { z } from 'zod';
import { cssNameHex } from './css-colors.js';
import { formatChoice } from './formats.js';

/** The facts about a setting the spellings need (a subset of SettingInfo, to keep this module leaf-level). */
export interface SpelledSetting {
  name: string;
  type: string;
  enum?: (string | number)[];
}

const TIME = /^(?:(\d+):)?(\d{1,2}):(\d{1,2}(?:\.\d+)?)$/;

/** `01:02:03.5` → 3723.5, `1:30` → 90; undefined when it is not a time. */
export function secondsOf(value: string): number | undefined {
  const m = TIME.exec(value.trim());
  if (!m) return undefined;
  const [h, mi, s] = [Number(m[1] ?? 0), Number(m[2]), Number(m[3])];
  if (mi >= 60 || s >= 60) return undefined;
  return h * 3600 + mi * 60 + s;
}

const isColorSetting = (name: string) => /colou?r$/i.test(name);
/** Seconds settings are named so (startS, durationS, secondsPerImage, timestamp): "16:9" elsewhere stays an error. */
const isSecondsSetting = (name: string) => (/[a-z]S$/.test(name) || /seconds|time/i.test(name)) && !/ratio|aspect/i.test(name);

/** One value in the spelling the schema wants, or the value unchanged. */
export function respell(s: SpelledSetting, v: unknown): unknown {
  if (typeof v !== 'string') return v;
  if (s.enum) return s.enum.includes(v) ? v : (formatChoice(s.enum.map(String), v) ?? v);
  if ((s.type === 'number' || s.type === 'integer') && v.includes(':') && isSecondsSetting(s.name)) return secondsOf(v) ?? v;
  if (s.type === 'string' && isColorSetting(s.name)) return cssNameHex(v) ?? v;
  return v;
}

/** Every value of `input` respelled (a new object only when something changed). */
export function respellAll(settings: SpelledSetting[], input: Record<string, unknown>): Record<string, unknown> {
  let out = input;
  for (const s of settings) {
    if (!(s.name in input)) continue;
    const v = respell(s, input[s.name]);
    if (v !== input[s.name]) out = { ...out, [s.name]: v };
  }
  return out;
}

const TYPE_WORDS: Record<string, string> = {
  number: 'a number',
  int: 'a whole number',
  integer: 'a whole number',
  boolean: 'true or false',
  string: 'text',
  array: 'a list',
  object: 'an object (JSON)',
};

/** A zod issue as a phrase that follows the setting's name: "is required", "must be at most 100". */
export function issuePhrase(issue: z.core.$ZodIssue, input: Record<string, unknown>): string {
  const i = issue as z.core.$ZodIssue & Record<string, unknown>;
  const unit = (n: unknown) =>
    i.origin === 'string' ? ` character${n === 1 ? '' : 's'}` : i.origin === 'array' ? ` item${n === 1 ? '' : 's'}` : '';
  switch (issue.code) {
    case 'invalid_type': {
      const top = issue.path.length === 1 ? input[String(issue.path[0])] : 0;
      if (top === undefined) return 'is required';
      return `must be ${TYPE_WORDS[String(i.expected)] ?? String(i.expected)}`;
    }
    case 'too_small':
      // "--password needs at least 1 characters" read oddly: a required text of min 1 must not be empty.
      if (i.origin === 'string' && Number(i.minimum) === 1) return 'must not be empty';
      if (i.origin === 'string' || i.origin === 'array') return `needs at least ${i.minimum}${unit(i.minimum)}`;
      return i.inclusive === false ? `must be more than ${i.minimum}` : `must be at least ${i.minimum}`;
    case 'too_big':
      if (i.origin === 'string' || i.origin === 'array') return `takes at most ${i.maximum}${unit(i.maximum)}`;
      return i.inclusive === false ? `must be less than ${i.maximum}` : `must be at most ${i.maximum}`;
    case 'invalid_value':
      return `must be one of ${(i.values as unknown[]).map(String).join(', ')}`;
    case 'invalid_format':
      return i.format === 'regex' ? `is not in the expected form (${String(i.pattern)})` : `must be a valid ${String(i.format)}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(i.divisor)}`;
    case 'unrecognized_keys':
      return `has unknown fields: ${(i.keys as string[]).join(', ')}`;
    default:
      // Our own refinements already speak plainly ("expected a colour: …").
      if (issue.message.startsWith('expected ')) return `must be ${issue.message.slice('expected '.length)}`;
      return /^(must|is|needs)\b/.test(issue.message) ? issue.message : `is not valid: ${issue.message}`;
  }
}
