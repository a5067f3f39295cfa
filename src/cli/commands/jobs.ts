/** `kiln jobs list|get|watch|cancel|download` against a kiln server. */
import path from 'node:path';
import { EXIT, KilnError } from '../../core/errors.js';
import { parseOutputOption, plainName, resolveOutputPath, writePolicy } from '../output-naming.js';
import { writeOutput } from '../output-write.js';
import { contentTypeFor } from '../../core/mime.js';
import { defaultDataDir } from '../../core/paths.js';
import type { Tool } from '../../core/tool.js';
import { JOB_STATUSES } from '../../../daemon/store/schema.js';
import { createWorkspace } from '../../core/workspace.js';
import { loadTool } from '../../tools/lazy.js';
import { findPreset, presetTool } from '../../tools/presets.js';
import { deliverOutput } from '../deliver.js';
import { createProgress } from '../progress.js';
import { resolveServer } from '../profiles.js';
import { connect, serverError, type RemoteClient } from '../remote/client.js';

type Opts = Record<string, string | boolean | undefined>;

interface JobView {
  jobId: string;
  tool: string;
  status: string;
  progress: { percent: number; stage: string | null };
  result: { downloadUrl?: string; data?: unknown } | null;
  error: { code: string; message: string } | null;
  outputName: string | null;
  createdAt: string | null;
  finishedAt: string | null;
}

async function client(o: Opts): Promise<RemoteClient> {
  const server = resolveServer({ server: o.server as string | undefined, profile: o.profile as string | undefined });
  if (!server) throw new KilnError('USAGE_ERROR', 'No server: pass --server URL, set KILN_SERVER, or run `kiln login URL`.');
  return connect(server);
}

function jobPath(id: string, rest = ''): string {
  return `/api/v1/jobs/${encodeURIComponent(id)}${rest}`;
}

export async function jobsList(o: Opts): Promise<void> {
  // Flags are checked before the server is contacted.
  const limit = o.limit !== undefined ? Number(o.limit) : 20;
  if (!Number.isInteger(limit) || limit < 1) throw new KilnError('USAGE_ERROR', '--limit takes a whole number >= 1.');
  const offset = o.offset !== undefined ? Number(o.offset) : 0;
  if (!Number.isInteger(offset) || offset < 0) throw new KilnError('USAGE_ERROR', '--offset takes a whole number >= 0.');
  const status = o.status as string | undefined;
  if (status !== undefined && !(JOB_STATUSES as readonly string[]).includes(status))
    throw new KilnError('USAGE_ERROR', `--status takes one of ${JOB_STATUSES.join(', ')} (got "${status}").`);
  const query = new URLSearchParams({ limit: String(limit), ...(offset ? { offset: String(offset) } : {}), ...(status ? { status } : {}) });
  const c = await client(o);
  const { jobs } = await c.json<{ jobs: JobView[] }>('GET', `/api/v1/jobs?${query}`);
  if (o.json) {
    process.stdout.write(JSON.stringify(jobs) + '\n');
    return;
  }
  if (!jobs.length) {
    process.stderr.write('No jobs.\n');
    return;
  }
  const w = Math.max(...jobs.map((j) => j.tool.length), 4);
  const idW = Math.max(...jobs.map((j) => j.jobId.length), 3);
  // A header for people; scripts read --json.
  process.stdout.write(`${'JOB'.padEnd(idW)}  ${'TOOL'.padEnd(w)}  ${'STATUS'.padEnd(12)}  CREATED  OUTPUT\n`);
  for (const j of jobs) {
    const status = j.status === 'running' || j.status === 'queued' ? `${j.status} ${j.progress.percent}%` : j.status;
    process.stdout.write(
      `${j.jobId.padEnd(idW)}  ${j.tool.padEnd(w)}  ${status.padEnd(12)}  ${j.createdAt ?? ''}  ${j.outputName ?? j.error?.code ?? ''}\n`,
    );
  }
}

export async function jobsGet(id: string, o: Opts): Promise<void> {
  const c = await client(o);
  const j = await c.json<JobView>('GET', jobPath(id));
  if (o.json) {
    process.stdout.write(JSON.stringify(j) + '\n');
    return;
  }
  const lines: [string, unknown][] = [
    ['job', j.jobId],
    ['tool', j.tool],
    ['status', j.status],
    ['progress', `${j.progress.percent}%${j.progress.stage ? ` (${j.progress.stage})` : ''}`],
    ['created', j.createdAt],
    ['finished', j.finishedAt],
    ['output', j.outputName],
    ['error', j.error ? `${j.error.code}: ${j.error.message}` : null],
  ];
  for (const [k, v] of lines) if (v !== null && v !== undefined) process.stdout.write(`${k.padEnd(9)} ${String(v)}\n`);
  if (j.result?.data !== undefined) process.stdout.write(JSON.stringify(j.result.data, null, 2) + '\n');
}

/** Follows the job to its end; exit status as for a run (0, or the error's code). Ctrl-C stops watching only. */
export async function jobsWatch(id: string, o: Opts): Promise<void> {
  const c = await client(o);
  const ac = new AbortController();
  process.once('SIGINT', () => ac.abort());
  const bar = createProgress({ quiet: !!o.quiet || !!o.json, total: 100, label: id.slice(0, 8), unit: 'percent' });
  try {
    for await (const e of c.events(id, ac.signal)) {
      if (o.json) process.stdout.write(JSON.stringify({ event: e.type, ...e.data }) + '\n');
      if (e.type === 'progress') bar.update(Number(e.data.percent ?? 0), typeof e.data.stage === 'string' ? e.data.stage : undefined);
      else if (e.type === 'completed') {
        bar.stop();
        if (!o.json) process.stderr.write(`job ${id} completed: kiln jobs download ${id}\n`);
        return;
      } else if (e.type === 'failed') {
        bar.stop();
        throw serverError(e.data as never, 500);
      }
    }
  } catch (e) {
    bar.stop();
    if (ac.signal.aborted) process.exit(EXIT.INTERRUPTED);
    throw e;
  }
}

/**
 * Cancels a job (one started with --async, say, which only curl could stop before). Exit 0 once it is
 * cancelled; a job that ended first is a CONFLICT (its state named), so `cancel && …` never takes a
 * finished job for a cancelled one.
 */
export async function jobsCancel(id: string, o: Opts): Promise<void> {
  const c = await client(o);
  // The server answers 200 with the job as the cancel left it: cancelled, or completed when the run
  // ended before the cancel reached it.
  const j = await c.json<JobView>('POST', jobPath(id, '/cancel'));
  if (j.status !== 'cancelled')
    throw new KilnError('CONFLICT', `Job ${id} ${j.status === 'completed' ? 'completed' : `is ${j.status}`} before the cancel reached it.`);
  if (o.json) process.stdout.write(JSON.stringify(j) + '\n');
  else process.stderr.write(`job ${id} cancelled\n`);
}

/** The tool (or preset) a job ran, when this kiln knows it (pipelines and unknown ids: undefined). */
async function knownTool(id: string): Promise<Tool | undefined> {
  const tool = await loadTool(id);
  if (tool) return tool;
  const preset = findPreset(id);
  const base = preset && (await loadTool(preset.tool));
  return preset && base ? presetTool(preset, base) : undefined;
}

export async function jobsDownload(id: string, o: Opts): Promise<void> {
  const policy = writePolicy(o);
  // Before any request: -o - with --json put the JSON line right after the file's bytes on stdout.
  const target = parseOutputOption(o.output as string | undefined, 1, { json: !!o.json });
  const c = await client(o);
  const j = await c.json<JobView>('GET', jobPath(id));
  if (j.status !== 'completed') {
    if (j.error) throw serverError(j.error, 409);
    throw new KilnError('JOB_NOT_READY', `Job ${id} is ${j.status}; \`kiln jobs watch ${id}\` follows it.`);
  }
  if (!j.result?.downloadUrl || !j.outputName) throw new KilnError('NOT_FOUND', `Job ${id} has no output file.`);
  const name = plainName(j.outputName);
  const tool = target.kind === 'stdout' ? undefined : await knownTool(j.tool);
  let dest: string;
  if (!tool) {
    // The server's name is used as a base name only; the tool id names the default (`<stem>-<tool>.<ext>`).
    dest = target.kind === 'stdout' ? '-' : resolveOutputPath(target, name, j.tool, [], policy);
    await writeOutput(await c.download(j.result.downloadUrl), dest);
  } else {
    // A known tool: the same rule as a run (format from the -o name, several files unpacked unless --zip).
    const aside = await createWorkspace();
    try {
      const got = path.join(aside.dir, name);
      await writeOutput(await c.download(j.result.downloadUrl), got);
      const ac = new AbortController();
      const d = await deliverOutput(
        { path: got, name, contentType: contentTypeFor(name) },
        {
          tool,
          name: j.tool,
          target,
          inputs: [],
          policy,
          zip: !!o.zip,
          usedNames: new Set(),
          workDir: aside.dir,
          dataDir: defaultDataDir(),
          signal: ac.signal,
        },
      );
      dest = d.output;
    } finally {
      await aside.dispose();
    }
  }
  if (o.json) process.stdout.write(JSON.stringify({ jobId: id, ok: true, output: dest }) + '\n');
  else if (dest !== '-') process.stderr.write(`${path.relative(process.cwd(), dest) || dest}\n`);
}
