/**
 * Saved pipelines: a validated pipeline JSON under a name unique per owner. Owners see their own;
 * roles with pipelines:all see everyone's; others get NOT_FOUND.
 */
import type { Kysely } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import { validatePipeline, type Pipeline } from '../../src/pipelines/pipeline.js';
import { roleHas } from '../auth/permissions.js';
import { newId } from '../auth/secrets.js';
import type { Database } from '../store/schema.js';
import type { PipelinesTable } from './schema.js';
import type { Viewer } from './service.js';

export type PipelineRow = PipelinesTable;

export function pipelineView(r: PipelineRow): Record<string, unknown> {
  const def = JSON.parse(r.definition) as Pipeline;
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    ownerId: r.owner_id,
    steps: def.steps,
    createdAt: new Date(Number(r.created_at)).toISOString(),
    updatedAt: new Date(Number(r.updated_at)).toISOString(),
  };
}

/** Validates a definition for saving: it must be a valid pipeline and carry a name. */
function checked(raw: unknown, fallbackName?: string): Pipeline {
  const body = raw && typeof raw === 'object' && !Array.isArray(raw) ? { ...(raw as Record<string, unknown>) } : raw;
  if (fallbackName && body && typeof body === 'object' && (body as { name?: unknown }).name === undefined)
    (body as { name?: string }).name = fallbackName;
  const { pipeline } = validatePipeline(body);
  if (!pipeline.name)
    throw new KilnError('VALIDATION_ERROR', 'A saved pipeline needs a name (letters, digits, dot, dash, underscore).', {
      details: [{ path: 'name', message: 'required' }],
    });
  return pipeline;
}

export class PipelineStore {
  constructor(private readonly db: Kysely<Database>) {}

  private seesAll(v: Viewer): boolean {
    return roleHas(v.role, 'pipelines:all');
  }

  /** By id, or by the viewer's own pipeline name. */
  async get(viewer: Viewer, ref: string): Promise<PipelineRow> {
    const byId = await this.db.selectFrom('pipelines').selectAll().where('id', '=', ref).executeTakeFirst();
    if (byId && (byId.owner_id === viewer.id || this.seesAll(viewer))) return byId;
    const byName = await this.db
      .selectFrom('pipelines')
      .selectAll()
      .where('owner_id', '=', viewer.id)
      .where('name', '=', ref)
      .executeTakeFirst();
    if (byName) return byName;
    throw new KilnError('NOT_FOUND', `No pipeline ${ref}.`);
  }

  async list(viewer: Viewer): Promise<PipelineRow[]> {
    let q = this.db.selectFrom('pipelines').selectAll();
    if (!this.seesAll(viewer)) q = q.where('owner_id', '=', viewer.id);
    return q.orderBy('name').orderBy('id').execute();
  }

  private async nameTaken(ownerId: string, name: string, except?: string): Promise<boolean> {
    let q = this.db.selectFrom('pipelines').select('id').where('owner_id', '=', ownerId).where('name', '=', name);
    if (except) q = q.where('id', '!=', except);
    return !!(await q.executeTakeFirst());
  }

  async create(viewer: Viewer, raw: unknown): Promise<PipelineRow> {
    const p = checked(raw);
    if (await this.nameTaken(viewer.id, p.name!))
      throw new KilnError('CONFLICT', `You already have a pipeline named ${p.name}; update it (PUT) or pick another name.`);
    const now = Date.now();
    const row: PipelineRow = {
      id: newId(),
      owner_id: viewer.id,
      name: p.name!,
      description: p.description ?? null,
      definition: JSON.stringify(p),
      created_at: now,
      updated_at: now,
    };
    await this.db.insertInto('pipelines').values(row).execute();
    return row;
  }

  async update(viewer: Viewer, ref: string, raw: unknown): Promise<PipelineRow> {
    const row = await this.get(viewer, ref);
    const p = checked(raw, row.name);
    if (await this.nameTaken(row.owner_id, p.name!, row.id))
      throw new KilnError('CONFLICT', `There is already a pipeline named ${p.name}.`);
    const patch = { name: p.name!, description: p.description ?? null, definition: JSON.stringify(p), updated_at: Date.now() };
    await this.db.updateTable('pipelines').set(patch).where('id', '=', row.id).execute();
    return { ...row, ...patch };
  }

  async delete(viewer: Viewer, ref: string): Promise<void> {
    const row = await this.get(viewer, ref);
    await this.db.deleteFrom('pipelines').where('id', '=', row.id).execute();
  }
}
