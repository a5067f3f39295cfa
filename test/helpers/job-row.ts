/** A job record written straight to the store: tests of what the daemon does with rows it finds there. */
import { randomBytes } from 'node:crypto';
import type { JobRow } from '../../daemon/store/jobs.js';

/** A resize job of `owner`, running since its creation (now) unless `patch` says otherwise. */
export function jobRow(owner: string, patch: Partial<JobRow> = {}): JobRow {
  const created = patch.created_at ?? Date.now();
  const status = patch.status ?? 'running';
  return {
    id: randomBytes(12).toString('hex'),
    owner_id: owner,
    tool: 'resize',
    base_tool: 'resize',
    kind: 'run',
    settings: '{}',
    status,
    progress: 0,
    stage: status === 'running' ? 'resizing' : status,
    result: null,
    error: null,
    client_job_id: null,
    instance_id: 'test-instance',
    work_dir: null,
    output_path: null,
    output_name: null,
    content_type: null,
    original_size: 1,
    processed_size: null,
    created_at: created,
    started_at: status === 'running' ? created : null,
    finished_at: null,
    ...patch,
  };
}
