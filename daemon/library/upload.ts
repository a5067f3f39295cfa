/**
 * A library upload: the multipart file streams to the library's scratch directory while its sha256
 * is computed; it stops at the upload limit, and stops being written once it passes the owner's
 * remaining quota (counted to its end, so the quota error gives its real size).
 */
import { createHash } from 'node:crypto';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyRequest } from 'fastify';
import { KilnError } from '../../src/core/errors.js';
import { safeFileName } from '../../src/core/paths.js';
import { newId } from '../auth/secrets.js';
import { writePart } from '../http/part-file.js';
import type { NewContent } from './service.js';

export interface LibraryUpload {
  file?: Required<NewContent>;
  fields: Map<string, string>;
}

export async function readLibraryUpload(
  request: FastifyRequest,
  tmpDir: string,
  limits: { maxUploadBytes: number; remainingQuota: number; quotaError: (adding: number) => KilnError },
  /** The text fields the route takes (`name`, `scope` for a new item; none for a new version). */
  accepts: readonly string[] = [],
): Promise<LibraryUpload> {
  if (!request.isMultipart())
    throw new KilnError('VALIDATION_ERROR', 'Send multipart/form-data with the file in the field "file" (and optionally "name").', {
      details: [{ path: 'file', message: 'required' }],
    });
  const fields = new Map<string, string>();
  const repeated = new Set<string>();
  const unknown = new Set<string>();
  let file: Required<NewContent> | undefined;
  try {
    // files: 2, so that a second file part is seen and refused as what it is (one item is one file),
    // not as busboy's files limit (413 "reach files limit", as if the upload were too large).
    for await (const part of request.parts({ limits: { fileSize: limits.maxUploadBytes, files: 2, fields: 20 } })) {
      if (part.type !== 'file') {
        if (!accepts.includes(part.fieldname)) unknown.add(part.fieldname);
        else if (fields.has(part.fieldname)) repeated.add(part.fieldname);
        fields.set(part.fieldname, String(part.value));
        continue;
      }
      if (part.fieldname !== 'file')
        throw new KilnError('VALIDATION_ERROR', `Unknown file field "${part.fieldname}": send the file in "file".`, {
          details: [{ path: part.fieldname, message: 'unknown file field' }],
        });
      if (file)
        throw new KilnError('VALIDATION_ERROR', 'One file per upload: the request has a second "file" part.', {
          details: [{ path: 'file', message: 'only one file' }],
        });
      const name = safeFileName(part.filename || 'upload', 'upload');
      const p = path.join(tmpDir, `${newId()}.part`);
      file = { path: p, name, hash: '', size: 0 };
      const hash = createHash('sha256');
      let size = 0;
      let overQuota = false;
      await writePart(part.file, p, (chunk) => {
        size += chunk.length;
        // Past the quota nothing more is written (the disk never fills), but the rest is still counted
        // (up to the upload limit): the error must give the file's real size, not the bytes read when
        // it stopped, or "needs 0.06 MB" sends the user to free 0.06 MB for a 200 MB file. Content
        // the owner already holds is not exempt here (its hash is not known yet), which only matters
        // for a duplicate at the quota's edge.
        if (overQuota || size > limits.remainingQuota) {
          overQuota = true;
          return false;
        }
        hash.update(chunk);
        return true;
      });
      // Worded as a tool upload's limit (daemon/http/uploads.ts): the limit is the live setting or a
      // team's override, so naming only MAX_UPLOAD_MB sent admins to the wrong knob.
      if (part.file.truncated)
        throw new KilnError(
          'LIMIT_EXCEEDED',
          `${name} is larger than the upload limit of ${Math.round(limits.maxUploadBytes / 1048576)} MB (the maxUploadMb setting; MAX_UPLOAD_MB by default).`,
        );
      if (overQuota) throw limits.quotaError(size);
      file.hash = hash.digest('hex');
      file.size = size;
    }
    // Checked once the body is read whole (the client still sending reads the answer), as a tool
    // run's form is: `-F scope=private -F scope=team` kept the last (shared it), and a misspelt or
    // misplaced field (`nmae`, `name` on a new version) was dropped without a word.
    if (repeated.size || unknown.size) {
      const problems = [
        ...[...repeated].map((f) => ({ path: f, message: 'duplicate field', text: `${f} was sent more than once` })),
        ...[...unknown].map((f) => ({
          path: f,
          message: 'unknown field',
          text: `unknown field ${f} (${accepts.length ? `this upload takes ${accepts.join(', ')} besides file` : 'this upload takes only file'})`,
        })),
      ];
      throw new KilnError('VALIDATION_ERROR', `${problems.map((p) => p.text).join('; ')}.`, {
        details: problems.map(({ path, message }) => ({ path, message })),
      });
    }
  } catch (e) {
    if (file) await rm(file.path, { force: true });
    throw e;
  }
  return { file, fields };
}
