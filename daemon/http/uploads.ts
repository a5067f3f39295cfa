/**
 * Multipart uploads streamed straight to disk in the job's directory (buffered whole only when the
 * caller holds room for the body in memory: memory-inputs.ts), and the
 * mapping of form fields to a tool's inputs and settings. Limits, each answered 413 naming its number
 * and setting: a file (MAX_UPLOAD_MB), a text field (MAX_FIELD_KB), text fields together (MAX_TEXT_KB,
 * counted on the wire as they arrive: wire-guard.ts),
 * the number of fields, the whole request (MAX_REQUEST_MB), and the user's job storage (USER_QUOTA_MB).
 */
import path from 'node:path';
import type { FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { safeFileName } from '../../src/core/paths.js';
import { coerceSettingValue, describeSettings } from '../../src/core/settings.js';
import type { InputFile, Tool, ToolInputs } from '../../src/core/tool.js';
import { afterUpload } from '../system/gc.js';
import { eachChunk, writePart } from './part-file.js';
import { chargeQuota, holdUntilAnswered } from './quota.js';
import { WireGuard } from './wire-guard.js';

const MB = 1048576;
const MAX_FIELDS = 200;

export interface UploadLimits {
  /** Largest file; by default the requester's live limit (maxUploadMb: settings, team, MAX_UPLOAD_MB). */
  maxFileBytes?: number;
  maxFiles?: number;
  /**
   * Keep file parts in memory (InputFile.bytes, their paths left unwritten) rather than in the directory:
   * an arena at least as large as the whole body (memory-inputs.ts), the parts copied in one after another.
   */
  arena?: Buffer;
}

export interface UploadedPart extends InputFile {
  field: string;
}

export interface ParsedUpload {
  /** File parts in the order they came. */
  parts: UploadedPart[];
  /** Text fields, each sent once (a repeated one is refused: readMultipart). */
  fields: Map<string, string>;
}

export async function readMultipart(request: FastifyRequest, dir: string, limits: UploadLimits): Promise<ParsedUpload> {
  const { config, store } = request.server.kiln;
  const maxRequest = config.maxRequestMb * MB;
  const maxText = config.maxTextKb * 1024;
  const maxField = Math.min(config.maxFieldKb * 1024, maxText);
  const tooBig = () =>
    new KilnError('LIMIT_EXCEEDED', `The request is larger than the limit of ${config.maxRequestMb} MB (MAX_REQUEST_MB).`, {
      details: { limitMb: config.maxRequestMb },
    });
  const declared = request.headers['content-length'] === undefined ? undefined : Number(request.headers['content-length']);
  if ((declared ?? 0) > maxRequest) {
    await drainBody(request);
    throw tooBig();
  }
  const live = await request.server.kiln.limits.forUser(request.user);
  const maxFileBytes = limits.maxFileBytes ?? live.maxUploadMb * MB;
  const maxFiles = limits.maxFiles ?? 1000;
  const quota = await chargeQuota(store.db, request.user?.id, live.userQuotaMb, declared).catch(async (e: unknown) => {
    await drainBody(request);
    throw e;
  });
  const textTooBig = () =>
    new KilnError('LIMIT_EXCEEDED', `The text fields together are larger than the limit of ${config.maxTextKb} KB (MAX_TEXT_KB).`, {
      details: { limitKb: config.maxTextKb },
    });
  let total = 0;
  let arenaUsed = 0;
  let textTotal = 0;
  let fieldCount = 0;
  const count = (n: number) => {
    total += n;
    if (total > maxRequest) throw tooBig();
    quota.add(n);
  };
  const parts: UploadedPart[] = [];
  const fields = new Map<string, string>();
  const repeated = new Set<string>();
  let wire: WireGuard | undefined;
  try {
    const iter = request
      .parts({
        // busboy's own limits one past ours, so going over is seen here and answered with our message.
        limits: { fileSize: maxFileBytes, files: maxFiles, fields: MAX_FIELDS + 1, fieldSize: maxField, parts: 1200 },
      })
      [Symbol.asyncIterator]();
    // The first next() sets the parser up and pipes the body into it: only then may the guard listen
    // (a 'data' listener on an unpiped body would let bytes flow past the parser).
    const first = iter.next();
    wire = new WireGuard(request, { maxRequestBytes: maxRequest, textBudgetBytes: maxText, tooBig, textTooBig });
    for (let step = await first; !step.done; step = await iter.next()) {
      const part = step.value;
      if (part.type === 'file') {
        const name = safeFileName(part.filename || part.fieldname, 'upload');
        const fileTooBig = () =>
          new KilnError(
            'LIMIT_EXCEEDED',
            `${name} is larger than the upload limit of ${Math.round(maxFileBytes / MB)} MB (the maxUploadMb setting; MAX_UPLOAD_MB by default).`,
            { details: { limitMb: Math.round(maxFileBytes / MB) } },
          );
        const guard = wire;
        part.file.once('limit', () => guard.fileTruncated(fileTooBig));
        // The index keeps two uploads with the same name apart.
        const p = path.join(dir, `${parts.length}-${name}`);
        let size = 0;
        const counted = (chunk: Buffer) => {
          guard.countFile(chunk.length);
          size += chunk.length;
          count(chunk.length);
        };
        const arena = limits.arena;
        const start = arenaUsed;
        if (arena) {
          // The body's declared length bounds its parts: they always fit.
          await eachChunk(part.file, (chunk) => {
            counted(chunk);
            arenaUsed += chunk.copy(arena, arenaUsed);
          });
        } else {
          await writePart(part.file, p, (chunk) => {
            counted(chunk);
            return true;
          });
        }
        if (part.file.truncated) throw fileTooBig();
        // No await between parts but the file's own: text arriving meanwhile would queue up unchecked.
        parts.push({ field: part.fieldname, path: p, name, size, ...(arena ? { bytes: arena.subarray(start, arenaUsed) } : {}) });
      } else {
        // A part declared application/json arrives parsed: back to its text, so it is counted and read as sent.
        const value = typeof part.value === 'string' ? part.value : (JSON.stringify(part.value) ?? '');
        if (++fieldCount > MAX_FIELDS)
          throw new KilnError('LIMIT_EXCEEDED', `Too many form fields: at most ${MAX_FIELDS}.`, { details: { limit: MAX_FIELDS } });
        if (part.valueTruncated && maxField < config.maxFieldKb * 1024) throw textTooBig();
        if (part.valueTruncated)
          throw new KilnError(
            'LIMIT_EXCEEDED',
            `The field ${part.fieldname} is larger than the limit of ${config.maxFieldKb} KB (MAX_FIELD_KB).`,
            {
              details: { field: part.fieldname, limitKb: config.maxFieldKb },
            },
          );
        textTotal += Buffer.byteLength(value);
        if (textTotal > maxText) throw textTooBig();
        count(Buffer.byteLength(value));
        if (fields.has(part.fieldname)) repeated.add(part.fieldname);
        fields.set(part.fieldname, value);
      }
    }
    // A text field sent twice (`-F width=4 -F width=5`, two `settings`) has no one meaning: refused, as
    // a repeated query parameter or indexed file field is, rather than one value silently dropped.
    // Only now, the body read whole, so the client still sending reads the answer.
    if (repeated.size)
      throw new KilnError('VALIDATION_ERROR', `${[...repeated].join(', ')} ${repeated.size === 1 ? 'was' : 'were'} sent more than once.`, {
        details: [...repeated].map((f) => ({ path: f, message: 'duplicate field' })),
      });
    await quota.confirm();
  } catch (e) {
    wire?.stop();
    quota.release();
    const code = (e as { code?: string }).code;
    if ((e instanceof KilnError && e.code === 'LIMIT_EXCEEDED') || code === 'FST_FILES_LIMIT') await drainBody(request);
    // busboy's own fields limit (one past ours) surfaces as its error: answer with ours.
    if (code === 'FST_FIELDS_LIMIT')
      throw new KilnError('LIMIT_EXCEEDED', `Too many form fields: at most ${MAX_FIELDS}.`, { details: { limit: MAX_FIELDS }, cause: e });
    // Its files limit is ours: say what the limit is, not busboy's "reach files limit".
    if (code === 'FST_FILES_LIMIT')
      throw new KilnError('LIMIT_EXCEEDED', `Too many files: at most ${maxFiles} in one request.`, {
        details: { limit: maxFiles },
        cause: e,
      });
    throw e;
  } finally {
    afterUpload(total);
  }
  wire.stop();
  // Until the answer: the job that holds these files is recorded (and counted) by then.
  holdUntilAnswered(request, quota);
  return { parts, fields };
}

const DRAIN_MAX_BYTES = 64 * MB;
const DRAIN_MAX_MS = 10_000;

/**
 * Reads and discards the rest of a body refused part-way, so the client (still sending) gets to read
 * the 413 instead of a connection reset. Bounded: past 64 MB or 10 s the connection is closed instead.
 */
async function drainBody(request: FastifyRequest): Promise<void> {
  const raw = request.raw;
  if (raw.complete || raw.destroyed) return;
  raw.unpipe();
  await new Promise<void>((resolve) => {
    let seen = 0;
    const done = () => {
      clearTimeout(timer);
      raw.off('data', onData);
      resolve();
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > DRAIN_MAX_BYTES) {
        raw.destroy();
        done();
      }
    };
    const timer = setTimeout(() => {
      raw.destroy();
      done();
    }, DRAIN_MAX_MS);
    raw.on('data', onData);
    raw.once('end', done);
    raw.once('close', done);
    raw.resume();
  });
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
      // The second `file` of a one-file tool, or the only one of a settings-driven tool that can take a
      // picture (meme-generator's custom-image mode), is the tool's extra `file`.
      const toExtra = tool.input.kind === 'none' || (tool.input.kind === 'file' && inputs.files.length === 1);
      if (toExtra && secondFile && !(inputs.extra.file?.length ?? 0)) {
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
  const inJson = new Set(Object.keys(base));
  for (const [name, value] of fields) {
    if (RESERVED.has(name)) continue;
    // `settings={"width":4}` and `width=5` together: which one was meant cannot be told.
    if (inJson.has(name))
      throw new KilnError('VALIDATION_ERROR', `${name} is given both in the settings JSON and as a form field of its own; send it once.`, {
        details: [{ path: name, message: 'duplicate setting' }],
      });
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
