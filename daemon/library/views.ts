/** The JSON views of library items and versions (HTTP routes, `kiln files --json`). */
import type { ItemRow, VersionRow } from './service.js';

export function itemView(item: ItemRow): Record<string, unknown> {
  return {
    id: item.id,
    name: item.name,
    ownerId: item.owner_id,
    contentType: item.content_type,
    size: Number(item.size),
    latestVersion: item.latest_version,
    scope: item.scope,
    createdAt: new Date(Number(item.created_at)).toISOString(),
    updatedAt: new Date(Number(item.updated_at)).toISOString(),
  };
}

export function versionView(v: VersionRow): Record<string, unknown> {
  return {
    version: v.version,
    name: v.name,
    size: Number(v.size),
    contentType: v.content_type,
    sha256: v.blob_hash,
    createdBy: v.created_by,
    createdAt: new Date(Number(v.created_at)).toISOString(),
    source: v.source,
    tool: v.tool,
    settings: v.settings ? JSON.parse(v.settings) : null,
    jobId: v.job_id,
    restoredFrom: v.restored_from,
  };
}
