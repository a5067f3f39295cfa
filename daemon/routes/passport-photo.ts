/**
 * The two phases of passport-photo (interface spec, "Passport photo (two phases)"):
 * POST …/passport-photo/analyze (multipart `file`) → landmarks, preview, dimensions, and a jobId that
 * keeps the upload; POST …/passport-photo/generate (JSON) → a normal passport-photo job on that upload
 * with the landmarks given, answered like every tool run (200 with downloadUrl, or 202). Kept uploads
 * live in `<sharedDir>/passport/<jobId>` and are removed after the jobs' TTL.
 */
import { copyFile, mkdir, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { sniffFile } from '../../src/core/sniff.js';
import { safeFileName } from '../../src/core/paths.js';
import { requireBundles } from '../../src/tools/bundles.js';
import { validateRequest } from '../../src/tools/run-tool.js';
import { requireUser } from '../auth/authenticate.js';
import { requirePermission } from '../auth/permissions.js';
import { readMultipart } from '../http/uploads.js';
import { preferenceApplied, preferredWait, syncAnswer } from '../jobs/answer.js';
import { findTarget, routeOf } from '../jobs/targets.js';

type Json = Record<string, unknown>;

interface Kept {
  owner: string;
  filename: string;
  file: string;
  imageWidth: number;
  imageHeight: number;
}

const ID = /^[A-Za-z0-9_-]{6,64}$/;

export async function passportPhotoRoutes(app: FastifyInstance): Promise<void> {
  const target = findTarget('passport-photo');
  if (!target) return;
  const base = routeOf(target);
  const keptDir = () => path.join(app.kiln.jobs.jobsDir, '..', 'passport');

  /** Kept analyses older than the job TTL go; run on each analyze, so no timer is needed. */
  async function sweep(): Promise<void> {
    const before = Date.now() - (await app.kiln.limits.settings()).outputTtlHours * 3_600_000;
    for (const name of await readdir(keptDir()).catch(() => [] as string[])) {
      const st = await stat(path.join(keptDir(), name)).catch(() => undefined);
      if (st && st.mtimeMs < before) await rm(path.join(keptDir(), name), { recursive: true, force: true });
    }
  }

  app.post(`${base}/analyze`, async (request) => {
    const user = requireUser(request);
    requirePermission(request, 'tools:use');
    const { dataDir } = app.kiln.config;
    await requireBundles(dataDir, target.id, target.tool.needs?.bundles ?? []);
    if (!request.isMultipart())
      throw new KilnError('VALIDATION_ERROR', 'analyze takes multipart/form-data with the portrait in the field "file".', {
        details: [{ path: 'file', message: 'required' }],
      });
    await sweep();
    const { id, workDir } = await app.kiln.jobs.allocate();
    const dir = path.join(keptDir(), id);
    try {
      const parsed = await readMultipart(request, path.join(workDir, 'in'), { maxFiles: 1 });
      const part = parsed.parts.find((p) => p.field === 'file');
      if (!part)
        throw new KilnError('VALIDATION_ERROR', 'analyze needs the portrait in the field "file".', {
          details: [{ path: 'file', message: 'required' }],
        });
      const kind = await sniffFile(part.path, part.name);
      if (!kind.mime.startsWith('image/')) throw new KilnError('UNSUPPORTED_INPUT', `${part.name} is not an image.`);
      await mkdir(dir, { recursive: true });
      const file = path.join(dir, `input.${kind.ext}`);
      await copyFile(part.path, file);
      const result = await analyzePortrait(file, part.name, kind, { dataDir, workDir, signal: AbortSignal.timeout(300_000) });
      const kept: Kept = {
        owner: user.id,
        filename: part.name,
        file,
        imageWidth: result.imageWidth as number,
        imageHeight: result.imageHeight as number,
      };
      await writeFile(path.join(dir, 'analysis.json'), JSON.stringify(kept));
      return { jobId: id, filename: part.name, ...result };
    } catch (e) {
      await rm(dir, { recursive: true, force: true });
      throw e;
    } finally {
      await rm(workDir, { recursive: true, force: true });
    }
  });

  app.post(`${base}/generate`, async (request, reply) => {
    const user = requireUser(request);
    requirePermission(request, 'tools:use');
    const body = request.body;
    if (!body || typeof body !== 'object' || Array.isArray(body))
      throw new KilnError(
        'VALIDATION_ERROR',
        'generate takes a JSON body: the settings with jobId, filename, landmarks, imageWidth, imageHeight from analyze.',
      );
    const raw = body as Json;
    const missing = ['jobId', 'filename', 'countryCode', 'landmarks', 'imageWidth', 'imageHeight'].filter((k) => raw[k] === undefined);
    if (missing.length)
      throw new KilnError('VALIDATION_ERROR', `generate needs ${missing.join(', ')} (from analyze).`, {
        details: missing.map((k) => ({ path: k, message: 'required' })),
      });
    const jobId = String(raw.jobId);
    const kept = ID.test(jobId)
      ? await readFile(path.join(keptDir(), jobId, 'analysis.json'), 'utf8')
          .then((t) => JSON.parse(t) as Kept)
          .catch(() => undefined)
      : undefined;
    // Another user's analysis is as invisible as a missing one.
    if (!kept || kept.owner !== user.id)
      throw new KilnError('NOT_FOUND', `No passport-photo analysis ${jobId}: POST ${base}/analyze first (analyses expire with the jobs).`);
    const { id, workDir, inDir } = await app.kiln.jobs.allocate();
    try {
      const file = path.join(inDir, safeFileName(kept.filename, 'photo'));
      await copyFile(kept.file, file);
      const inputs = { files: [{ path: file, name: kept.filename, size: (await stat(file)).size }], extra: {} };
      const settings = validateRequest(target.tool, inputs, raw);
      await app.kiln.jobs.submit({ id, owner: user, target, settings, inputs, workDir });
    } catch (e) {
      await rm(workDir, { recursive: true, force: true });
      throw e;
    }
    const { waitMs, applied } = preferredWait(request.headers.prefer, (await app.kiln.limits.settings()).syncWindowMs);
    const answer = await syncAnswer(app.kiln.jobs, id, waitMs);
    reply.headers(preferenceApplied(applied, answer.status));
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  });
}

/** The analyze phase: matte and landmarks of the largest face, and a preview at most 800 px. */
async function analyzePortrait(
  file: string,
  name: string,
  kind: { ext: string; mime: string },
  opts: { dataDir: string; workDir: string; signal: AbortSignal },
): Promise<Json> {
  const { readPicture, matte } = await import('../../src/tools/image/ai/_background.js');
  const { portraitLandmarks } = await import('../../src/tools/image/ai/passport-photo.js');
  const { getSharp } = await import('../../src/engines/sharp.js');
  const ctx = {
    workDir: opts.workDir,
    outDir: opts.workDir,
    signal: opts.signal,
    dataDir: opts.dataDir,
    progress() {},
    // The analysis answers landmarks, not a tool result: nothing would carry a warning.
    warn() {},
    out: (ext: string) => path.join(opts.workDir, `out.${ext}`),
  };
  const p = await readPicture({ path: file, name, size: 0, type: kind }, ctx);
  const m = await matte(p, 'isnet-fp16', ctx);
  const landmarks = await portraitLandmarks(p, m.alpha, ctx);
  const sharp = await getSharp();
  const { data, info } = await sharp(p.rgb, { raw: { width: p.width, height: p.height, channels: 3 } })
    .resize(800, 800, { fit: 'inside', withoutEnlargement: true })
    .jpeg({ quality: 80 })
    .toBuffer({ resolveWithObject: true });
  return {
    preview: `data:image/jpeg;base64,${data.toString('base64')}`,
    previewWidth: info.width,
    previewHeight: info.height,
    landmarks,
    imageWidth: p.width,
    imageHeight: p.height,
  };
}

const obj = (properties: Json, required?: string[]): Json => ({ type: 'object', properties, ...(required ? { required } : {}) });
const point = obj({ x: { type: 'number' }, y: { type: 'number' } }, ['x', 'y']);

/** OpenAPI paths of the two phases, for daemon/openapi/document.ts to merge. */
export function passportPhotoPaths(): Json {
  const target = findTarget('passport-photo');
  if (!target) return {};
  const base = routeOf(target);
  const errors = Object.fromEntries([400, 401, 404, 409, 415].map((c) => [String(c), { $ref: `#/components/responses/Error${c}` }]));
  return {
    [`${base}/analyze`]: {
      post: {
        tags: ['image'],
        operationId: 'passportPhotoAnalyze',
        summary: 'passport-photo, phase 1: face landmarks, preview and dimensions of a portrait.',
        requestBody: {
          required: true,
          content: { 'multipart/form-data': { schema: obj({ file: { type: 'string', format: 'binary' } }, ['file']) } },
        },
        responses: {
          '200': {
            description: 'The analysis; jobId and the landmarks go back to generate.',
            content: {
              'application/json': {
                schema: obj(
                  {
                    jobId: { type: 'string' },
                    filename: { type: 'string' },
                    preview: { type: 'string', description: 'data:image/jpeg;base64,… at most 800 px' },
                    previewWidth: { type: 'integer' },
                    previewHeight: { type: 'integer' },
                    imageWidth: { type: 'integer' },
                    imageHeight: { type: 'integer' },
                    landmarks: obj({
                      points: { type: 'array', items: point, description: '68 points (iBUG 300-W order), image pixels' },
                      box: obj({ x: { type: 'number' }, y: { type: 'number' }, width: { type: 'number' }, height: { type: 'number' } }),
                      score: { type: 'number' },
                      eyes: obj({ left: point, right: point }),
                      chin: point,
                      crown: point,
                      crownFrom: { type: 'string', enum: ['matte', 'proportion'] },
                      faces: { type: 'integer' },
                    }),
                  },
                  ['jobId', 'filename', 'preview', 'previewWidth', 'previewHeight', 'imageWidth', 'imageHeight', 'landmarks'],
                ),
              },
            },
          },
          ...errors,
        },
      },
    },
    [`${base}/generate`]: {
      post: {
        tags: ['image'],
        operationId: 'passportPhotoGenerate',
        summary: 'passport-photo, phase 2: the photo sized to the country rule (a ZIP with the print sheet when printLayout is set).',
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/PassportPhotoSettings' } } },
        },
        responses: {
          '200': {
            description: 'Done: jobId, downloadUrl, originalSize, processedSize, data.',
            content: { 'application/json': { schema: { type: 'object' } } },
          },
          '202': {
            description: 'Queued: jobId and async true; follow /api/v1/jobs/{jobId}/progress.',
            content: { 'application/json': { schema: { type: 'object' } } },
          },
          ...errors,
        },
      },
    },
  };
}
