/**
 * Runs a tool on a kiln server with the same inputs, output names, --json lines and exit codes as
 * local-runner.ts: one upload per input for single-file tools (a batch, a few uploads at a time), one
 * for multi-file tools. 200 → download; 202 → follow the job's events with the progress bar, then
 * download. An abort (Ctrl-C) cancels the jobs that were started and removes nothing but temp files.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { EXIT, KilnError, toKilnError } from '../core/errors.js';
import { contentTypeFor } from '../core/mime.js';
import { defaultDataDir } from '../core/paths.js';
import { createWorkspace } from '../core/workspace.js';
import { deliverOutput, namingOrder, runDelivery } from './deliver.js';
import { spoolStdin, stripExit, type ItemResult, type LocalRunRequest } from './local-runner.js';
import { formatFromOutputName } from './output-format.js';
import { parseOutputOption, plainName, type OutputTarget } from './output-naming.js';
import { writeOutput } from './output-write.js';
import { createProgress } from './progress.js';
import { inFlagWords } from './tool-command.js';
import type { ServerChoice } from './profiles.js';
import { connect, serverError, type FormPart, type RemoteClient } from './remote/client.js';

export interface RemoteRunRequest extends LocalRunRequest {
  server: ServerChoice;
  /** Print the job id once the server has queued the run, and do not wait for it. */
  async?: boolean;
  /** A library item on the server used instead of an uploaded input. */
  fileId?: string;
  /** The route to post to, when it is not the tool's (a saved pipeline: /api/v1/pipelines/NAME/run). */
  route?: string;
}

/** Uploads at a time for a batch: the server does the work, the link is the limit. */
const DEFAULT_UPLOADS = 4;

interface JobOutcome {
  jobId: string;
  downloadUrl?: string;
  originalSize?: number;
  processedSize?: number;
  data?: Record<string, unknown>;
  /** A run on a library item (--file-id): the item its output was saved to as a new version… */
  savedFileId?: string;
  /** …or why it was not (a teammate's shared item, the quota): the run itself succeeded. */
  afterSuccessError?: { code: string; message: string };
}

export function routeFor(req: Pick<RemoteRunRequest, 'tool' | 'name' | 'route'>): string {
  return req.route ?? `/api/v1/tools/${req.tool.section}/${req.name}`;
}

/** Form parts of one run: the settings, the main files, the extra files by their field names. */
function formParts(req: RemoteRunRequest, group: string[], stdinPath: string | undefined, clientJobId: string): FormPart[] {
  const file = (p: string): FormPart =>
    p === '-' ? { field: 'file', path: stdinPath!, filename: 'stdin' } : { field: 'file', path: p, filename: path.basename(p) };
  const parts: FormPart[] = [
    { field: 'settings', value: JSON.stringify(req.settings) },
    { field: 'clientJobId', value: clientJobId },
  ];
  if (req.fileId) parts.push({ field: 'fileId', value: req.fileId });
  parts.push(...group.map(file));
  for (const x of req.tool.input.extra ?? []) {
    const paths = req.extra[x.field] ?? [];
    paths.forEach((p, i) => {
      const field = x.field === 'file' ? 'file' : x.indexed ? `${x.field}${i}` : x.field;
      parts.push({ ...file(p), field });
    });
  }
  return parts;
}

async function submit(
  client: RemoteClient,
  req: RemoteRunRequest,
  group: string[],
  stdinPath: string | undefined,
  signal: AbortSignal,
  clientJobId: string,
  onJob: (id: string) => void,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const hasFiles = group.length > 0 || Object.keys(req.extra).length > 0 || !!req.fileId;
  // --async: the server answers 202 at once (RFC 7240) and the CLI prints the job id.
  const headers: Record<string, string> = req.async ? { prefer: 'respond-async' } : {};
  const res =
    req.tool.input.kind === 'none' && !hasFiles
      ? await client.postJson(routeFor(req), req.settings, signal, headers)
      : await client.postForm(routeFor(req), formParts(req, group, stdinPath, clientJobId), signal, headers);
  // Every run answer of a kiln server names its job; without one (`{}` from something else at that URL)
  // the run was reported ok with no output written.
  if (typeof res.body.jobId !== 'string')
    throw new KilnError('UNAVAILABLE', `${client.server} answered the run without a job id: check that the URL is a kiln server's.`);
  onJob(res.body.jobId);
  return res;
}

/** Follows a 202 job to its end; progress goes to the bar. */
async function follow(
  client: RemoteClient,
  jobId: string,
  signal: AbortSignal,
  onProgress?: (p: number, stage?: string) => void,
): Promise<JobOutcome> {
  for await (const e of client.events(jobId, signal)) {
    if (e.type === 'progress') onProgress?.(Number(e.data.percent ?? 0), typeof e.data.stage === 'string' ? e.data.stage : undefined);
    else if (e.type === 'completed') return e.data as unknown as JobOutcome;
    else if (e.type === 'failed') throw serverError(e.data as never, 500);
  }
  throw new KilnError('UNAVAILABLE', `The progress stream of job ${jobId} ended without a result.`);
}

/**
 * The file name at the end of a server's download URL, as a plain base name: the server is not trusted
 * to name paths (`..%2F..%2Fx` is `x`).
 */
export function nameOf(downloadUrl: string): string {
  return plainName(downloadUrl.split('?')[0]!.split('/').pop() ?? '', 'output');
}

export async function runRemote(request: RemoteRunRequest): Promise<ItemResult[]> {
  let req = request;
  const { tool } = req;
  const groups: string[][] =
    tool.input.kind === 'file' ? (req.fileId && req.inputs.length === 0 ? [[]] : req.inputs.map((i) => [i])) : [req.inputs];
  if (tool.input.kind === 'file' && req.inputs.length === 0 && !req.fileId)
    throw new KilnError('USAGE_ERROR', `kiln ${req.name} needs an input file.`);
  if (req.fileId && req.inputs.length > 0 && tool.input.kind === 'file')
    throw new KilnError('USAGE_ERROR', '--file-id replaces the input file: give one or the other.');
  if (req.inputs.filter((i) => i === '-').length > 1) throw new KilnError('USAGE_ERROR', 'stdin (-) can be read once.');
  const target: OutputTarget = parseOutputOption(req.output, groups.length, {
    stdinInput: req.inputs.includes('-') && !req.json && !req.silent,
    json: req.json,
  });
  // The output's name decides its format, as for a local run (src/cli/output-format.ts).
  if (target.kind === 'file') req = { ...req, settings: formatFromOutputName(tool, req.name, req.settings, target.path!) };
  const delivery = runDelivery(req, target, defaultDataDir());
  const client = await connect(req.server);

  // stdin is spooled to a file so the upload can stream it with a known length.
  const ws = req.inputs.includes('-') ? await createWorkspace() : undefined;
  let stdinPath: string | undefined;
  if (ws) {
    stdinPath = path.join(ws.dir, 'stdin');
    try {
      await spoolStdin(stdinPath, req.signal);
    } catch (e) {
      await ws.dispose();
      // Stopped while stdin was still coming: nothing ran (the caller exits 130/143).
      if (req.signal.aborted) return [];
      throw e;
    }
  }

  const batch = groups.length > 1;
  const progress = createProgress({
    quiet: req.quiet || req.json,
    total: groups.length,
    label: req.name,
    unit: batch ? 'items' : 'percent',
  });
  const results: ItemResult[] = new Array(groups.length);
  const naming = namingOrder(groups.map((g) => (g.length === 1 ? g[0]! : null)));
  const running = new Set<string>();
  // Uploads whose answer (and job id) has not come yet: found again by their clientJobId after Ctrl-C.
  const inFlight = new Set<string>();
  let next = 0;
  let done = 0;
  const workers = Math.max(1, Math.min(groups.length, req.concurrency ?? DEFAULT_UPLOADS));
  const onProgress = batch ? undefined : (p: number, stage?: string) => progress.update(p, stage);

  const runOne = async (i: number) => {
    const group = groups[i]!;
    const label = group.length === 1 ? group[0]! : null;
    let jobId: string | undefined;
    try {
      onProgress?.(0, 'uploading');
      const clientJobId = randomUUID();
      inFlight.add(clientJobId);
      const res = await submit(client, req, group, stdinPath, req.signal, clientJobId, (id) => {
        jobId = id;
        running.add(id);
      });
      inFlight.delete(clientJobId);
      if (req.async && res.status === 202) {
        running.delete(jobId!);
        results[i] = { input: label, ok: true, ...({ jobId, async: true } as object), exitCode: EXIT.OK };
        if (!req.json && !req.silent) process.stdout.write(`${jobId}\n`);
        return;
      }
      const outcome = res.status === 202 ? await follow(client, jobId!, req.signal, onProgress) : (res.body as unknown as JobOutcome);
      running.delete(outcome.jobId);
      let outPath: string | undefined;
      let outputs: string[] | undefined;
      if (outcome.downloadUrl) {
        const name = nameOf(outcome.downloadUrl);
        if (target.kind === 'stdout' && req.silent)
          throw new KilnError('USAGE_ERROR', 'Standard output is not available here: name an output file or directory.');
        if (target.kind === 'stdout') {
          await writeOutput(await client.download(outcome.downloadUrl, req.signal), '-', req.signal);
          outPath = '-';
        } else if (target.kind === 'default' && outcome.data && name.endsWith('.json')) {
          // Data-only tools print their JSON when no -o is given, as locally (with --json it is in the result line).
          if (!req.json && !req.silent) process.stdout.write(JSON.stringify(outcome.data, null, 2) + '\n');
        } else {
          onProgress?.(100, 'downloading');
          // Fetched aside first, then put in place by the same rule as a local run (src/cli/deliver.ts).
          const aside = await createWorkspace();
          try {
            const got = path.join(aside.dir, name);
            await writeOutput(await client.download(outcome.downloadUrl, req.signal), got, req.signal);
            await naming.turn(i);
            const d = await deliverOutput(
              { path: got, name, contentType: contentTypeFor(name) },
              { ...delivery, inputName: label ?? undefined, workDir: aside.dir },
            );
            outPath = d.output;
            outputs = d.outputs;
          } finally {
            await aside.dispose();
          }
        }
      } else if (outcome.data && !req.json && !req.silent && target.kind !== 'stdout') {
        process.stdout.write(JSON.stringify(outcome.data, null, 2) + '\n');
      }
      results[i] = {
        input: label,
        ok: true,
        output: outPath,
        ...(outputs ? { outputs } : {}),
        originalSize: outcome.originalSize,
        processedSize: outcome.processedSize,
        ...(outcome.data ? { data: outcome.data } : {}),
        ...({ jobId: outcome.jobId } as object),
        // The server's answer about the library item, which was dropped: a --file-id run whose version
        // was refused (403 on a teammate's item, the quota) looked saved.
        ...(outcome.savedFileId ? { savedFileId: outcome.savedFileId } : {}),
        ...(outcome.afterSuccessError ? { afterSuccessError: outcome.afterSuccessError } : {}),
        exitCode: EXIT.OK,
      };
    } catch (e) {
      const err = req.flagWords ? inFlagWords(toKilnError(e), tool) : toKilnError(e);
      results[i] = { input: label, ok: false, ...(jobId ? ({ jobId } as object) : {}), error: err.toJSON().error, exitCode: err.exitCode };
    } finally {
      naming.done(i);
      done++;
      if (batch) progress.update(done);
      if (req.json && !req.silent) process.stdout.write(JSON.stringify(stripExit(results[i]!)) + '\n');
    }
  };

  try {
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (next < groups.length && !req.signal.aborted) await runOne(next++);
      }),
    );
  } finally {
    progress.stop();
    // Ctrl-C: the jobs this run started must not keep the server busy.
    if (req.signal.aborted && inFlight.size) {
      // The server may have accepted an upload whose answer never arrived.
      const late = await client
        .json<{ jobs: { jobId: string; clientJobId: string | null; status: string }[] }>(
          'GET',
          '/api/v1/jobs?limit=100',
          undefined,
          AbortSignal.timeout(5000),
        )
        .catch(() => ({ jobs: [] }));
      for (const j of late.jobs)
        if (j.clientJobId && inFlight.has(j.clientJobId) && (j.status === 'queued' || j.status === 'running')) running.add(j.jobId);
    }
    if (req.signal.aborted && running.size) {
      await Promise.allSettled([...running].map((id) => client.cancel(id)));
      if (!req.quiet) process.stderr.write(`kiln: cancelled ${running.size} job${running.size > 1 ? 's' : ''} on ${client.server}\n`);
    }
    await ws?.dispose();
  }
  return results.filter(Boolean);
}
