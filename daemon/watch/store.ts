/** The watch_folders table (migration 0500): what an admin configured, validated on the way in. */
import { stat } from 'node:fs/promises';
import path from 'node:path';
import type { Kysely } from 'kysely';
import { z } from 'zod';
import { KilnError, toKilnError } from '../../src/core/errors.js';
import { pipelineTool, validatePipeline, type Pipeline } from '../../src/pipelines/pipeline.js';
import { validateRequest } from '../../src/tools/run-tool.js';
import { newId } from '../auth/secrets.js';
import type { Database } from '../store/schema.js';
import { findUserById } from '../store/users.js';
import { redactedDefinition, sealDefinition } from '../library/pipelines.js';
import { insideFolder, sameFolder } from '../../src/watch/paths.js';
import { makeDir } from '../../src/core/make-dir.js';

/** The encryption scope of a watch folder's pipeline copy. */
export const watchScope = (id: string) => `watch-folder:${id}`;

export interface WatchFoldersTable {
  id: string;
  name: string;
  /** Absolute path of the watched folder on the server (every instance sees the same path in scaled mode). */
  path: string;
  output_path: string;
  /** JSON of the pipeline definition, copied at creation (a saved pipeline changed later does not change it). */
  pipeline: string;
  owner_id: string;
  recursive: number;
  keep: number;
  stable_ms: number;
  created_by: string;
  created_at: number;
}

declare module '../store/schema.js' {
  interface Database {
    watch_folders: WatchFoldersTable;
  }
}

export type WatchFolderRow = WatchFoldersTable;

export const WatchFolderBody = z
  .object({
    name: z.string().min(1).max(100).optional(),
    path: z.string().min(1).describe('absolute path of the folder to watch, on the server'),
    outputPath: z.string().min(1).describe('absolute path where outputs go (created when missing)'),
    pipeline: z
      .object({ steps: z.array(z.object({ tool: z.string(), settings: z.record(z.string(), z.unknown()).optional() })).min(1) })
      .passthrough()
      .optional()
      .describe('the pipeline run on every file (same shape as POST /api/v1/pipelines)'),
    pipelineId: z
      .string()
      .optional()
      .describe(
        "a saved pipeline (its definition is copied) that the folder's owner may run: its own, a team pipeline of its team, or any for an admin",
      ),
    ownerId: z.string().optional().describe('the user whose jobs these are (default: the admin creating the folder)'),
    recursive: z.boolean().default(false),
    keep: z.boolean().default(false).describe('leave processed originals in place instead of moving them to .done/'),
    stableMs: z.number().int().min(0).max(600_000).default(2000).describe('a file is complete once its size has not changed for this long'),
  })
  .strict();

export function watchFolderView(r: WatchFolderRow): Record<string, unknown> {
  const p = JSON.parse(r.pipeline) as Pipeline;
  return {
    id: r.id,
    name: r.name,
    path: r.path,
    outputPath: r.output_path,
    // Shown to admins only, yet passwords in it are not shown back (kept as given: the watcher runs it).
    pipeline: redactedDefinition(p),
    ownerId: r.owner_id,
    recursive: !!r.recursive,
    keep: !!r.keep,
    stableMs: r.stable_ms,
    createdBy: r.created_by,
    createdAt: new Date(Number(r.created_at)).toISOString(),
  };
}

export async function listWatchFolders(db: Kysely<Database>): Promise<WatchFolderRow[]> {
  return db.selectFrom('watch_folders').selectAll().orderBy('created_at').execute();
}

export async function getWatchFolder(db: Kysely<Database>, id: string): Promise<WatchFolderRow> {
  const row = await db.selectFrom('watch_folders').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw new KilnError('NOT_FOUND', `No watch folder ${id}.`);
  return row;
}

/** Checks the body (folders, owner, pipeline) and stores it. `savedPipeline` resolves a pipelineId for the folder's owner. */
export async function createWatchFolder(
  db: Kysely<Database>,
  adminId: string,
  raw: unknown,
  savedPipeline: (id: string, ownerId: string) => Promise<unknown>,
  dataKey: Buffer,
): Promise<WatchFolderRow> {
  const parsed = WatchFolderBody.safeParse(raw);
  if (!parsed.success)
    throw new KilnError('VALIDATION_ERROR', parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`).join('; '), {
      details: parsed.error.issues.map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  const b = parsed.data;
  if (!path.isAbsolute(b.path) || !path.isAbsolute(b.outputPath))
    throw new KilnError('VALIDATION_ERROR', 'path and outputPath must be absolute paths on the server.');
  const inDir = path.resolve(b.path);
  const outDir = path.resolve(b.outputPath);
  if (!(await stat(inDir).catch(() => undefined))?.isDirectory())
    throw new KilnError('VALIDATION_ERROR', `No folder ${inDir} on the server.`);
  if (insideFolder(inDir, outDir))
    throw new KilnError('VALIDATION_ERROR', 'outputPath must not be inside the watched folder (outputs would be processed again).');
  await makeDir(outDir).catch((e: Error) => {
    throw new KilnError('VALIDATION_ERROR', `outputPath cannot be created: ${e.message}`);
  });
  if (!!b.pipeline === !!b.pipelineId)
    throw new KilnError('VALIDATION_ERROR', 'Give exactly one of pipeline (a definition) or pipelineId.');
  const ownerId = b.ownerId ?? adminId;
  const owner = await findUserById(db, ownerId);
  if (!owner) throw new KilnError('VALIDATION_ERROR', `No user ${ownerId} to own the jobs.`);
  // Its jobs would run as an account that may do nothing (a running folder pauses when its owner is disabled).
  if (owner.disabled_at != null)
    throw new KilnError(
      'CONFLICT',
      `${owner.username} is disabled: a watch folder runs its files as its owner. Enable the account or choose another owner.`,
      {
        reason: 'owner-disabled',
      },
    );
  const { pipeline, steps } = validatePipeline(b.pipeline ?? (await savedPipeline(b.pipelineId!, ownerId)));
  // Each job gets one file: a pipeline that takes none (qr-generate) or several (merge-pdf) would fail
  // every file that arrives; refused now, as `kiln watch --pipeline` does, with the same message.
  try {
    validateRequest(pipelineTool(steps, pipeline.name ?? 'pipeline'), { files: [{ path: 'x', name: 'x', size: 0 }], extra: {} }, {});
  } catch (e) {
    const err = toKilnError(e);
    throw new KilnError('VALIDATION_ERROR', `pipeline: ${err.message} A watch folder runs it on one file at a time.`, {
      details: [{ path: b.pipeline ? 'pipeline' : 'pipelineId', message: err.message }],
    });
  }
  // Two watchers on one file both run it and race to move it: the same folder (through a link too), or
  // one inside a folder watched with its sub-folders, is refused.
  for (const other of await db.selectFrom('watch_folders').select(['path', 'recursive']).execute()) {
    if (sameFolder(other.path, inDir)) throw new KilnError('CONFLICT', `${inDir} is watched already.`);
    if ((other.recursive && insideFolder(other.path, inDir)) || (b.recursive && insideFolder(inDir, other.path)))
      throw new KilnError('CONFLICT', `${inDir} overlaps the watched folder ${other.path}: its files would be processed twice.`);
  }
  const id = newId();
  const row: WatchFolderRow = {
    id,
    name: b.name ?? pipeline.name ?? path.basename(inDir),
    path: inDir,
    output_path: outDir,
    // Its own copy, secret settings (passwords) encrypted like a saved pipeline's.
    pipeline: JSON.stringify(sealDefinition(pipeline, dataKey, watchScope(id))),
    owner_id: ownerId,
    recursive: b.recursive ? 1 : 0,
    keep: b.keep ? 1 : 0,
    stable_ms: b.stableMs,
    created_by: adminId,
    created_at: Date.now(),
  };
  await db.insertInto('watch_folders').values(row).execute();
  return row;
}

export async function deleteWatchFolder(db: Kysely<Database>, id: string): Promise<void> {
  await getWatchFolder(db, id);
  await db.deleteFrom('watch_folders').where('id', '=', id).execute();
}
