/**
 * The follow-ups of a run, built the same way wherever it runs: saving the output to a file library
 * item (fileId) and, with object storage, uploading the output before the job counts as completed.
 */
import { KilnError } from '../../src/core/errors.js';
import type { AuthUser } from '../auth/authenticate.js';
import { removeStoredInputs, storeOutput, storesJobFiles } from '../storage/job-files.js';
import type { ObjectStorage } from '../storage/storage.js';
import type { JobRow } from '../store/jobs.js';
import type { RunSpec } from './run.js';

export type Viewer = { id: string; role: AuthUser['role'] };

/** Saves a finished job's output to a library item; the saved item's id. */
export type LibrarySaver = (viewer: Viewer, fileId: string, row: JobRow) => Promise<string>;

export function saveStep(save: LibrarySaver | undefined, viewer: Viewer, fileId: string | undefined): RunSpec['afterSuccess'] {
  if (!fileId) return undefined;
  if (!save) throw new KilnError('VALIDATION_ERROR', 'fileId: the file library is not available on this server.');
  return async (row) => ({ savedFileId: await save(viewer, fileId, row) });
}

/** S3 mode: the output is uploaded before the job is marked completed, so any instance serves it. */
export function outputStep(storage: ObjectStorage, id: string): RunSpec['storeOutput'] {
  if (!storesJobFiles(storage)) return undefined;
  return async (file, name, type) => {
    const stored = await storeOutput(storage, id, file, name, type);
    // Like the local inputs, the stored ones go before the job counts as completed.
    await removeStoredInputs(storage, id);
    return stored;
  };
}
