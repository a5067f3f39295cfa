/**
 * Saved pipelines: a validated pipeline JSON under a name unique per owner. Owners see their own,
 * members of the owner's team see (and run) its `team` pipelines (sharing.ts), roles with
 * pipelines:all see everyone's; others get NOT_FOUND. Only the owner and admins change or delete one.
 * Secret settings (declared with `secret()` by the tool, or named like a password) are stored
 * encrypted with the data key and shown as "[redacted]"; a run decrypts them. Sending "[redacted]"
 * back in an update keeps the stored value.
 */
import type { Kysely, Selectable } from 'kysely';
import { KilnError } from '../../src/core/errors.js';
import { secretSettingNames } from '../../src/core/settings.js';
import { resolveToolOrPreset, validatePipeline, type Pipeline } from '../../src/pipelines/pipeline.js';
import { decryptSecret, encryptSecret, isEncrypted } from '../auth/data-key.js';
import { roleHas } from '../auth/permissions.js';
import { newId } from '../auth/secrets.js';
import type { Database } from '../store/schema.js';
import type { PipelinesTable } from './schema.js';
import type { Viewer } from './service.js';
import { accessTo, checkScopeFor, onlyOwnerChanges, parseScope, type Scope, type ScopeFilter, scopeCondition } from './sharing.js';

export type PipelineRow = Selectable<PipelinesTable>;

export const REDACTED = '[redacted]';
/** Names that are secrets whatever the tool declares (the job records' rule, daemon/jobs/service.ts). */
const SECRET_NAME = /password|secret|passphrase|token/i;

type Step = Pipeline['steps'][number];

function isSecret(step: Step, name: string): boolean {
  if (SECRET_NAME.test(name)) return true;
  const tool = resolveToolOrPreset(step.tool);
  return !!tool && secretSettingNames(tool).has(name);
}

const aad = (pipelineId: string) => `pipeline:${pipelineId}`;

/** The definition with each step setting passed through `fn` (which knows whether it is a secret). */
function mapSettings(def: Pipeline, fn: (v: unknown, secret: boolean) => unknown): Pipeline {
  return {
    ...def,
    steps: def.steps.map((st) => ({
      ...st,
      settings: Object.fromEntries(Object.entries(st.settings).map(([k, v]) => [k, fn(v, isSecret(st, k))])),
    })),
  };
}

/** The definition with its secrets redacted: what every view shows. */
export function redactedDefinition(def: Pipeline): Pipeline {
  return mapSettings(def, (v, secret) => (isEncrypted(v) || (secret && v !== undefined && v !== '') ? REDACTED : v));
}

/**
 * A copy of a definition kept by another record (a watch folder's), its secrets encrypted under that
 * record's own scope (`watch-folder:<id>`), and the way back for a run.
 */
export function sealDefinition(def: Pipeline, key: Buffer, scope: string): Pipeline {
  return mapSettings(def, (v, secret) =>
    typeof v === 'string' && v !== '' && !isEncrypted(v) && secret ? encryptSecret(key, v, scope) : v,
  );
}

export function openDefinition(def: Pipeline, key: Buffer, scope: string): Pipeline {
  return mapSettings(def, (v) => (isEncrypted(v) ? decryptSecret(key, v, scope) : v));
}

/** Encrypts the secrets of a definition being saved; "[redacted]" keeps the value stored at that step before. */
function protect(def: Pipeline, key: Buffer, pipelineId: string, previous?: Pipeline): Pipeline {
  return {
    ...def,
    steps: def.steps.map((st, i) => ({
      ...st,
      settings: Object.fromEntries(
        Object.entries(st.settings).map(([k, v]) => {
          if (v === REDACTED) {
            const before = previous?.steps[i];
            if (before?.tool === st.tool && isEncrypted(before.settings[k])) return [k, before.settings[k]];
            throw new KilnError('VALIDATION_ERROR', `Step ${i + 1} (${st.tool}): ${k} is "${REDACTED}"; send the value itself.`, {
              details: [{ path: `steps.${i}.settings.${k}`, message: 'redacted placeholder without a stored value' }],
            });
          }
          return [k, typeof v === 'string' && v !== '' && !isEncrypted(v) && isSecret(st, k) ? encryptSecret(key, v, aad(pipelineId)) : v];
        }),
      ),
    })),
  };
}

/** The stored definition with its secrets decrypted: what a run uses. */
export function revealDefinition(row: PipelineRow, key: Buffer): Pipeline {
  const def = JSON.parse(row.definition) as Pipeline;
  return {
    ...def,
    steps: def.steps.map((st) => ({
      ...st,
      settings: Object.fromEntries(
        Object.entries(st.settings).map(([k, v]) => [k, isEncrypted(v) ? decryptSecret(key, v, aad(row.id)) : v]),
      ),
    })),
  };
}

export function pipelineView(r: PipelineRow): Record<string, unknown> {
  const def = redactedDefinition(JSON.parse(r.definition) as Pipeline);
  return {
    id: r.id,
    name: r.name,
    description: r.description,
    ownerId: r.owner_id,
    scope: r.scope,
    steps: def.steps,
    createdAt: new Date(Number(r.created_at)).toISOString(),
    updatedAt: new Date(Number(r.updated_at)).toISOString(),
  };
}

/**
 * A save body without its `scope`: the record's scope travels beside the definition, never inside it
 * (the definition's top level is strict). POST /api/v1/pipelines/validate takes a save body as it is.
 */
export function definitionOf(raw: unknown): unknown {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const { scope: _scope, ...definition } = raw as Record<string, unknown>;
  return definition;
}

/** Validates a definition for saving: it must be a valid pipeline and carry a name. */
function checked(raw: unknown, fallbackName?: string): Pipeline {
  const body = definitionOf(raw);
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
  constructor(
    private readonly db: Kysely<Database>,
    private readonly key: Buffer,
  ) {}

  /** Encrypts secrets that versions before encryption at rest saved in clear (at start; cheap when none are left). */
  async encryptClearSecrets(): Promise<number> {
    let n = 0;
    for (const row of await this.db.selectFrom('pipelines').selectAll().execute()) {
      const def = JSON.parse(row.definition) as Pipeline;
      const definition = JSON.stringify(protect(def, this.key, row.id));
      if (definition === row.definition) continue;
      await this.db.updateTable('pipelines').set({ definition }).where('id', '=', row.id).execute();
      n++;
    }
    return n;
  }

  /** The saved definition, secrets decrypted, for a run. */
  reveal(row: PipelineRow): Pipeline {
    return revealDefinition(row, this.key);
  }

  private seesAll(v: Viewer): boolean {
    return roleHas(v.role, 'pipelines:all');
  }

  /** By id, by the viewer's own pipeline name, or by the name of the one team pipeline it sees so named. */
  async get(viewer: Viewer, ref: string): Promise<PipelineRow> {
    return (await this.reach(viewer, ref)).row;
  }

  /** As get, for a change: the owner or an admin (a teammate gets FORBIDDEN). */
  async editable(viewer: Viewer, ref: string): Promise<PipelineRow> {
    const { row, access } = await this.reach(viewer, ref);
    if (access === 'team') throw onlyOwnerChanges(`Pipeline ${row.name}`);
    return row;
  }

  private async reach(viewer: Viewer, ref: string) {
    const byId = await this.db.selectFrom('pipelines').selectAll().where('id', '=', ref).executeTakeFirst();
    const idAccess = byId && (await accessTo(this.db, byId, viewer, this.seesAll(viewer)));
    if (byId && idAccess) return { row: byId, access: idAccess };
    const own = await this.db
      .selectFrom('pipelines')
      .selectAll()
      .where('owner_id', '=', viewer.id)
      .where('name', '=', ref)
      .executeTakeFirst();
    if (own) return { row: own, access: 'owner' as const };
    // Names reach only what the viewer's team shares (an admin's too: not every team's pipeline of that name).
    const teams = await scopeCondition(this.db, viewer, false, 'team');
    const shared = await this.db
      .selectFrom('pipelines')
      .selectAll()
      .where(teams!)
      .where('name', '=', ref)
      .where('owner_id', '!=', viewer.id)
      .execute();
    if (shared.length > 1)
      throw new KilnError('CONFLICT', `${shared.length} team pipelines are named ${ref}; name one by its id (kiln pipeline list).`);
    if (shared.length === 1) return { row: shared[0], access: (await accessTo(this.db, shared[0], viewer, this.seesAll(viewer)))! };
    throw new KilnError('NOT_FOUND', `No pipeline ${ref}.`);
  }

  async list(viewer: Viewer, scope: ScopeFilter = 'all'): Promise<PipelineRow[]> {
    let q = this.db.selectFrom('pipelines').selectAll();
    const visible = await scopeCondition(this.db, viewer, this.seesAll(viewer), scope);
    if (visible) q = q.where(visible);
    return q.orderBy('name').orderBy('id').execute();
  }

  /** Whether `userId` (a watch folder's owner) may run `row`: its own, its team's, or any for an admin. */
  async usableBy(row: PipelineRow, userId: string): Promise<boolean> {
    const u = await this.db.selectFrom('users').select(['id', 'role', 'team_id']).where('id', '=', userId).executeTakeFirst();
    return !!u && !!(await accessTo(this.db, row, { id: u.id, role: u.role, teamId: u.team_id }, roleHas(u.role, 'pipelines:all')));
  }

  private async nameTaken(ownerId: string, name: string, except?: string): Promise<boolean> {
    let q = this.db.selectFrom('pipelines').select('id').where('owner_id', '=', ownerId).where('name', '=', name);
    if (except) q = q.where('id', '!=', except);
    return !!(await q.executeTakeFirst());
  }

  async create(viewer: Viewer, raw: unknown): Promise<PipelineRow> {
    const scope = parseScope((raw as { scope?: unknown } | null)?.scope) ?? 'private';
    const p = checked(raw);
    await checkScopeFor(this.db, viewer.id, scope);
    if (await this.nameTaken(viewer.id, p.name!))
      throw new KilnError('CONFLICT', `You already have a pipeline named ${p.name}; update it (PUT) or pick another name.`);
    const now = Date.now();
    const id = newId();
    const row: PipelineRow = {
      id,
      owner_id: viewer.id,
      name: p.name!,
      description: p.description ?? null,
      definition: JSON.stringify(protect(p, this.key, id)),
      scope,
      created_at: now,
      updated_at: now,
    };
    await this.db.insertInto('pipelines').values(row).execute();
    return row;
  }

  /** Replaces the definition; the scope changes only when `scope` is sent. */
  async update(viewer: Viewer, ref: string, raw: unknown): Promise<PipelineRow> {
    const row = await this.editable(viewer, ref);
    const asked = parseScope((raw as { scope?: unknown } | null)?.scope);
    const p = checked(raw, row.name);
    if (asked) await checkScopeFor(this.db, row.owner_id, asked);
    const scope: Scope = asked ?? (row.scope as Scope);
    if (await this.nameTaken(row.owner_id, p.name!, row.id))
      throw new KilnError('CONFLICT', `There is already a pipeline named ${p.name}.`);
    const definition = JSON.stringify(protect(p, this.key, row.id, JSON.parse(row.definition) as Pipeline));
    const patch = { name: p.name!, description: p.description ?? null, definition, scope, updated_at: Date.now() };
    await this.db.updateTable('pipelines').set(patch).where('id', '=', row.id).execute();
    return { ...row, ...patch };
  }

  /** Changes only the scope (PATCH). */
  async setScope(viewer: Viewer, ref: string, raw: unknown): Promise<PipelineRow> {
    const row = await this.editable(viewer, ref);
    const scope = parseScope(raw);
    if (!scope)
      throw new KilnError('VALIDATION_ERROR', 'Send {"scope": "private" | "team"} as JSON.', {
        details: [{ path: 'scope', message: 'required' }],
      });
    await checkScopeFor(this.db, row.owner_id, scope);
    const patch = { scope, updated_at: Date.now() };
    await this.db.updateTable('pipelines').set(patch).where('id', '=', row.id).execute();
    return { ...row, ...patch };
  }

  async delete(viewer: Viewer, ref: string): Promise<void> {
    const row = await this.editable(viewer, ref);
    await this.db.deleteFrom('pipelines').where('id', '=', row.id).execute();
  }
}
