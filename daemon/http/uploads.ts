/**
 * Multipart uploads streamed straight to disk in the job's directory (never buffered whole), and the
 * mapping of form fields to a tool's inputs and settings.
 */
import { createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { safeFileName } from '../../src/core/paths.js';
import { coerceSettingValue, describeSettings } from '../../src/core/settings.js';
import type { InputFile, Tool, ToolInputs } from '../../src/core/tool.js';

export interface UploadLimits {
  maxFileBytes: number;
  maxFiles?: number;
}

export interface UploadedPart extends InputFile {
  field: string;
}

export interface ParsedUpload {
  /** File parts in the order they came. */
  parts: UploadedPart[];
  /** Text fields (the last value wins). */
  fields: Map<string, string>;
}

export async function readMultipart(request: FastifyRequest, dir: string, limits: UploadLimits): Promise<ParsedUpload> {
  const parts: UploadedPart[] = [];
  const fields = new Map<string, string>();
  const iter = request.parts({
    limits: { fileSize: limits.maxFileBytes, files: limits.maxFiles ?? 1000, fields: 200, fieldSize: 10 * 1024 * 1024, parts: 1200 },
  });
  for await (const part of iter) {
    if (part.type === 'file') {
      const name = safeFileName(part.filename || part.fieldname, 'upload');
      // The index keeps two uploads with the same name apart.
      const p = path.join(dir, `${parts.length}-${name}`);
      await pipeline(part.file, createWriteStream(p));
      if (part.file.truncated)
        throw new KilnError(
          'LIMIT_EXCEEDED',
          `${name} is larger than the upload limit of ${Math.round(limits.maxFileBytes / 1048576)} MB (MAX_UPLOAD_MB).`,
        );
      parts.push({ field: part.fieldname, path: p, name, size: (await stat(p)).size });
    } else {
      fields.set(part.fieldname, typeof part.value === 'string' ? part.value : String(part.value));
    }
  }
  return { parts, fields };
}

/** Places uploaded parts where the tool expects them: main files, then extras by field name. */
export function toToolInputs(tool: Tool, parts: UploadedPart[]): ToolInputs {
  const inputs: ToolInputs = { files: [], extra: {} };
  const extras = tool.input.extra ?? [];
  const secondFile = extras.find((x) => x.field === 'file');
  const indexedParts: Record<string, Map<number, InputFile>> = {};
  for (const p of parts) {
    const { field, ...file } = p;
    if (field === 'file' || (field === 'files' && tool.input.kind === 'files')) {
      if (tool.input.kind === 'file' && inputs.files.length === 1 && secondFile && !(inputs.extra.file?.length ?? 0)) {
        inputs.extra.file = [file];
      } else {
        inputs.files.push(file);
      }
      continue;
    }
    const exact = extras.find((x) => x.field === field && x.field !== 'file');
    if (exact) {
      (inputs.extra[exact.field] ??= []).push(file);
      continue;
    }
    // Only small indices: the number comes from the client (sig200000000 once built a sparse array of
    // that length and froze the event loop).
    const m = /^(.+?)(0|[1-9]\d{0,3})$/.exec(field);
    const indexed = m ? extras.find((x) => x.indexed && x.field === m[1]) : undefined;
    if (indexed) {
      const index = Number(m![2]);
      const max = indexed.max ?? DEFAULT_INDEXED_MAX;
      if (index >= max)
        throw new KilnError('VALIDATION_ERROR', `${field}: ${tool.id} takes ${indexed.field}0 to ${indexed.field}${max - 1}.`, {
          details: [{ path: field, message: `index above ${max - 1}` }],
        });
      const slots = (indexedParts[indexed.field] ??= new Map());
      if (slots.has(index))
        throw new KilnError('VALIDATION_ERROR', `${field} was sent twice.`, { details: [{ path: field, message: 'duplicate field' }] });
      slots.set(index, file);
      continue;
    }
    const known = ['file', ...extras.map((x) => (x.indexed ? `${x.field}0, ${x.field}1…` : x.field))].filter(
      (v, i, a) => a.indexOf(v) === i,
    );
    throw new KilnError('VALIDATION_ERROR', `${tool.id} has no file field "${field}"; it takes ${known.join(', ')}.`, {
      details: [{ path: field, message: 'unknown file field' }],
    });
  }
  // In index order, gaps closed (sig0 and sig2 become the first and second signature).
  for (const [k, slots] of Object.entries(indexedParts))
    inputs.extra[k] = [...slots.entries()].sort((a, b) => a[0] - b[0]).map(([, f]) => f);
  return inputs;
}

/** Indexed file fields (sig0, sig1…) a tool takes when its declaration names no maximum. */
const DEFAULT_INDEXED_MAX = 100;

const RESERVED = new Set(['settings', 'clientJobId', 'fileId']);

/** `settings` (a JSON object string) plus any other text field, coerced to the setting's type. */
export function assembleSettings(tool: Tool, settingsJson: string | undefined, fields: Map<string, string>): Record<string, unknown> {
  let base: Record<string, unknown> = {};
  if (settingsJson !== undefined && settingsJson.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(settingsJson);
    } catch (e) {
      throw new KilnError('VALIDATION_ERROR', `The settings field is not valid JSON: ${(e as Error).message}`, {
        details: [{ path: 'settings', message: 'invalid JSON' }],
      });
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
      throw new KilnError('VALIDATION_ERROR', 'The settings field must be a JSON object.', {
        details: [{ path: 'settings', message: 'expected an object' }],
      });
    }
    base = parsed as Record<string, unknown>;
  }
  const infos = new Map(describeSettings(tool).map((i) => [i.name, i]));
  for (const [name, value] of fields) {
    if (RESERVED.has(name)) continue;
    base[name] = /^\s*[[{]/.test(value)
      ? parseJsonOr(value, () => coerceSettingValue(infos.get(name), value))
      : coerceSettingValue(infos.get(name), value);
  }
  return base;
}

function parseJsonOr(value: string, fallback: () => unknown): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return fallback();
  }
}
