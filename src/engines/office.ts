/**
 * LibreOffice as a small pool of warm headless instances.
 *
 * How we talk to a warm soffice without Python UNO: each instance runs `soffice.bin --headless` with its
 * own profile (`-env:UserInstallation`) and an empty Writer document open (`private:factory/swriter`).
 * A second `soffice.bin --convert-to … -env:UserInstallation=<same profile>` finds the running instance
 * through its IPC pipe, hands it the job and waits until it is done. The open document matters: without
 * it the instance terminates after the first forwarded conversion (it shuts down once no frame is left).
 * Measured on the CI machine: about 2 s per conversion cold (new profile per call) against well under
 * 0.3 s warm — see docs/DOCUMENTS.md.
 *
 * One conversion per instance at a time; a conversion that exceeds its time-out gets its instance killed
 * and restarted; an instance that dies is restarted on the next request. Macros never run: every profile
 * is seeded with the highest macro security level and macro execution disabled, and we never pass a
 * macro URL or a `--script`-like argument.
 */
import { existsSync, rmSync, unlinkSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { KilnError } from '../core/errors.js';
import { exec } from '../core/process.js';
import { engineStopped } from './idle-stop.js';
import { isEncryptedOoxml, odfEncryptionTap, passwordProtectedDocument } from './office/encryption.js';
import { assertCsvFitsSheet } from './office/csv-shape.js';
import { csvImport, textInFilter } from './office/text-import.js';
import { COMMON, EXIT_RESTART, Instance, officeBinary, officeEnv, pipePath, seedProfile } from './office/instance.js';

const POOL_SIZE = Math.min(2, Math.max(1, Number(process.env.KILN_OFFICE_POOL) || 1));
const DEFAULT_TIMEOUT_MS = Number(process.env.KILN_OFFICE_TIMEOUT_MS) || 120_000;

const instances: Instance[] = [];
const waiters: ((i: Instance) => void)[] = [];

/**
 * How long the pool may sit without a conversion before its instances stop (each holds ~150 MB):
 * Infinity (the default, and a CLI run) keeps them until exit. The daemon sets it from
 * KILN_ENGINE_IDLE_S. The profiles stay, so the next conversion restarts an instance without the
 * profile-creation pass.
 */
let idleMs = Number.POSITIVE_INFINITY;
let idleTimer: NodeJS.Timeout | undefined;

export function setOfficeIdleStop(ms: number): void {
  idleMs = ms;
  armIdleStop();
}

function armIdleStop(): void {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = undefined;
  if (!Number.isFinite(idleMs) || instances.some((i) => i.busy) || !instances.some((i) => i.alive)) return;
  // (setTimeout takes at most 2^31-1 ms: anything longer is as good as never.)
  if (idleMs > 2 ** 31 - 1) return;
  idleTimer = setTimeout(() => {
    idleTimer = undefined;
    if (instances.some((i) => i.busy)) return;
    for (const i of instances) i.kill();
    engineStopped('office');
  }, idleMs);
  idleTimer.unref();
}

function acquire(signal?: AbortSignal): Promise<Instance> {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = undefined;
  if (instances.length < POOL_SIZE) instances.push(new Instance(instances.length, registerExitHook));
  const free = instances.find((i) => !i.busy);
  if (free) {
    free.busy = true;
    return Promise.resolve(free);
  }
  return new Promise((resolve, reject) => {
    const take = (i: Instance) => {
      signal?.removeEventListener('abort', onAbort);
      resolve(i);
    };
    const onAbort = () => {
      const k = waiters.indexOf(take);
      if (k >= 0) waiters.splice(k, 1);
      reject(new KilnError('CANCELLED', 'The run was cancelled.'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    waiters.push(take);
  });
}

function release(i: Instance): void {
  const next = waiters.shift();
  if (next) next(i);
  else {
    i.busy = false;
    armIdleStop();
  }
}

export interface ConvertOptions {
  /** LibreOffice's `--convert-to` target, e.g. `pdf:writer_pdf_Export` or `csv:Text - txt - csv (StarCalc):44,34,76,1`. */
  target: string;
  /** Extension of the file LibreOffice writes (pdf, docx, csv…). */
  outExt: string;
  /** Import filter, when the extension alone would mislead LibreOffice (CSV opened in Writer…). */
  inFilter?: string;
  /** Private directory of the run; the job's files live under it. */
  workDir: string;
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Name the input is copied under (without extension; default `document`): a CSV's sheet takes it. */
  baseName?: string;
  /**
   * LibreOffice names the output itself: a CSV of one chosen sheet is written as `<base>-<sheet>.csv`.
   * The one file it wrote is the result.
   */
  ownOutputName?: boolean;
}

/**
 * Converts one file with a warm instance and returns the path of the result (inside workDir).
 * The input is copied under a plain name first so the output name is predictable and no user-chosen
 * file name ever reaches LibreOffice's command line.
 */
export async function officeConvert(input: string, inExt: string, o: ConvertOptions): Promise<string> {
  const jobDir = await mkdtemp(path.join(o.workDir, 'office-'));
  const base = o.baseName ?? 'document';
  const src = path.join(jobDir, `${base}.${inExt}`);
  await copyFile(input, src);
  const outDir = path.join(jobDir, 'out');
  await mkdir(outDir);
  const inst = await acquire(o.signal);
  try {
    await inst.start();
    const bin = await officeBinary();
    const args = [
      ...COMMON,
      `-env:UserInstallation=${inst.profileUrl}`,
      ...(o.inFilter ? [`--infilter=${o.inFilter}`] : []),
      '--convert-to',
      o.target,
      '--outdir',
      outDir,
      src,
    ];
    const timeoutMs = o.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    try {
      await exec(bin, args, { signal: o.signal, timeoutMs, env: officeEnv(inst.profileDir), failCode: 'UNSUPPORTED_INPUT' });
    } catch (e) {
      // A time-out or cancel leaves the instance mid-job: only a restart makes it usable again.
      if (e instanceof KilnError && (e.code === 'TIMEOUT' || e.code === 'CANCELLED')) inst.kill();
      if (e instanceof KilnError && e.code === 'TIMEOUT')
        throw new KilnError(
          'TIMEOUT',
          `LibreOffice took longer than ${Math.round(timeoutMs / 1000)} s on this document and was restarted.`,
        );
      throw e;
    }
    const crashed = !inst.alive;
    if (crashed) inst.kill();
    let out = path.join(outDir, `${base}.${o.outExt}`);
    if (o.ownOutputName) {
      const written = (await readdir(outDir).catch(() => [])).filter((f) => f.endsWith(`.${o.outExt}`));
      if (written.length === 1) out = path.join(outDir, written[0]!);
    }
    const st = await stat(out).catch(() => undefined);
    if (!st?.isFile() || st.size === 0) {
      if (crashed) throw new KilnError('UNSUPPORTED_INPUT', 'LibreOffice crashed on this document (it will be restarted).');
      const left = await readdir(outDir).catch(() => []);
      throw new KilnError(
        'UNSUPPORTED_INPUT',
        // (A legacy .doc/.xls/.ppt with a password ends here too: its encryption is not checked beforehand.)
        `LibreOffice could not read this document${left.length ? '' : ' (it is corrupt, password-protected or not of the type it claims)'}.`,
      );
    }
    return out;
  } finally {
    release(inst);
  }
}

/**
 * One conversion the slow way: a new profile and a new soffice process for this call alone. Kept for
 * the cold/warm measurement (docs/DOCUMENTS.md) and as a reference in tests.
 */
export async function officeConvertCold(input: string, inExt: string, o: ConvertOptions): Promise<string> {
  const jobDir = await mkdtemp(path.join(o.workDir, 'office-cold-'));
  const profile = path.join(jobDir, 'profile');
  await seedProfile(profile);
  const src = path.join(jobDir, `document.${inExt}`);
  await copyFile(input, src);
  const outDir = path.join(jobDir, 'out');
  const bin = await officeBinary();
  const args = [...COMMON, `-env:UserInstallation=${pathToFileURL(profile).href}`, '--convert-to', o.target, '--outdir', outDir, src];
  for (let attempt = 0; attempt < 2; attempt++) {
    const r = await exec(bin, args, {
      signal: o.signal,
      timeoutMs: o.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      env: officeEnv(profile),
      okCodes: [0, EXIT_RESTART],
      failCode: 'UNSUPPORTED_INPUT',
    });
    if (r.code === 0) break;
  }
  const out = path.join(outDir, `document.${o.outExt}`);
  if (!existsSync(out)) throw new KilnError('UNSUPPORTED_INPUT', 'LibreOffice could not read this document.');
  return out;
}

/** Process ids of the running instances (for `kiln doctor`-style reports and the restart test). */
export function officePoolStatus(): { size: number; pids: (number | undefined)[]; profiles: string[] } {
  return { size: POOL_SIZE, pids: instances.map((i) => i.pid), profiles: instances.map((i) => i.profileDir) };
}

/**
 * Starts the pool ahead of the first request, with a warm-up conversion per instance (the daemon
 * calls it at start-up; a CLI run starts one instance lazily and skips the warm-up).
 */
export async function warmOffice(): Promise<void> {
  while (instances.length < POOL_SIZE) instances.push(new Instance(instances.length, registerExitHook));
  await Promise.all(instances.map((i) => i.start(true)));
  armIdleStop();
}

/** Stops every instance and removes their profiles. Safe to call more than once. */
export async function shutdownOffice(): Promise<void> {
  if (idleTimer) clearTimeout(idleTimer);
  idleTimer = undefined;
  await Promise.all(instances.map((i) => i.dispose()));
  instances.length = 0;
}

/** The name the daemon calls on stop (same as shutdownOffice). */
export const shutdown = shutdownOffice;

let hooked = false;
function registerExitHook(): void {
  if (hooked) return;
  hooked = true;
  // Synchronous: on 'exit' only kill() can still run; the profiles are in the temp dir.
  process.once('exit', () => {
    for (const i of instances) {
      i.kill();
      if (i.profileDir) rmSync(i.profileDir, { recursive: true, force: true });
      try {
        if (i.profileUrl) unlinkSync(pipePath(i.profileUrl));
      } catch {
        /* not there */
      }
    }
  });
}

/**
 * The user's file stem as a safe file name for the copy LibreOffice reads: letters, digits, space, `_`
 * and `-` (never a leading `-`, which soffice would read as an option), at most 31 characters (Excel's
 * sheet name limit); `document` when nothing is left.
 */
export function sheetBaseName(name: string | undefined): string {
  const stem = path.basename(name ?? '', path.extname(name ?? ''));
  const safe = stem
    .normalize('NFC')
    .replace(/[^\p{L}\p{N} _-]+/gu, '_')
    .replace(/^[\s_-]+/, '')
    .slice(0, 31)
    .trim();
  return safe || 'document';
}

/** `--convert-to` targets per output format; PDF export filters depend on the document family. */
export const OFFICE_TARGETS = {
  docx: 'docx:MS Word 2007 XML',
  odt: 'odt:writer8',
  rtf: 'rtf:Rich Text Format',
  txt: 'txt:Text (encoded):UTF8',
  pptx: 'pptx:Impress MS PowerPoint 2007 XML',
  odp: 'odp:impress8',
  xlsx: 'xlsx:Calc MS Excel 2007 XML',
  ods: 'ods:calc8',
  // Comma, double quote, UTF-8 (76), from line 1, default cell format and language, only quote text
  // that needs it, detect special numbers, save values as shown.
  csv: 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true',
  'pdf-writer': 'pdf:writer_pdf_Export',
  'pdf-calc': 'pdf:calc_pdf_Export',
  'pdf-impress': 'pdf:impress_pdf_Export',
} as const;
export type OfficeTarget = keyof typeof OFFICE_TARGETS;

export interface OfficeJob {
  workDir: string;
  signal: AbortSignal;
  progress?: (pct: number, stage?: string) => void;
}

/**
 * The whole office path of a tool: ZIP containers are checked for bombs first, then the warm pool
 * converts, and the result is moved to `outPath`. For a CSV, which holds one sheet (the first visible one),
 * the names of the sheets left out of an XLSX or ODS come back in `sheetsLeftOut` (read during the ZIP check).
 */
export async function convertOfficeFile(
  input: { path: string; name?: string; type?: { ext: string } },
  target: OfficeTarget,
  outPath: string,
  job: OfficeJob,
): Promise<{ sheetsLeftOut: string[] }> {
  const ext = input.type?.ext ?? path.extname(input.path).slice(1).toLowerCase();
  const { guardZip, isZipContainer } = await import('../core/zip-guard.js');
  const sheets = target === 'csv' ? (await import('./office-sheets.js')).sheetNameTap(ext) : undefined;
  const nameExt = path
    .extname(input.name ?? input.path)
    .slice(1)
    .toLowerCase();
  // Headless LibreOffice cannot ask for a password: say so instead of "corrupt".
  if (ext === 'cfb' && ['docx', 'xlsx', 'pptx'].includes(nameExt) && (await isEncryptedOoxml(input.path)))
    throw passwordProtectedDocument();
  const odf = ['odt', 'ods', 'odp'].includes(ext) ? odfEncryptionTap() : undefined;
  if (isZipContainer(ext))
    await guardZip(
      input.path,
      ext,
      undefined,
      job.signal,
      [sheets?.tap, odf?.tap].filter((t) => t !== undefined),
    );
  if (odf?.encrypted()) throw passwordProtectedDocument();
  job.progress?.(10, 'converting');
  const outExt = target.startsWith('pdf-') ? 'pdf' : target;
  // Legacy binaries are sniffed as cfb; the tool's accept list already limited them to its family.
  const inExt = ext === 'cfb' ? nameExt || 'doc' : ext;
  // The extension says nothing of a CSV's encoding or separator: read from the file, which must fit a sheet.
  const csv = inExt === 'csv' ? await csvImport(input.path) : undefined;
  if (csv) await assertCsvFitsSheet(input.path, csv.encoding, csv.separator, csv.hintLine ? 1 : 0);
  // CSV takes the first visible sheet (LibreOffice's 12th CSV token, 1-based), never a hidden one.
  const listed = sheets?.sheets() ?? [];
  const chosen = Math.max(
    0,
    listed.findIndex((sh) => !sh.hidden),
  );
  const out = await officeConvert(input.path, inExt, {
    target: target === 'csv' && chosen > 0 ? `${OFFICE_TARGETS.csv},false,false,${chosen + 1}` : OFFICE_TARGETS[target],
    ownOutputName: target === 'csv' && chosen > 0,
    outExt,
    // A text file's encoding is read from the file too.
    inFilter: csv ? csv.filter : inExt === 'txt' ? await textInFilter(input.path) : undefined,
    // LibreOffice names a CSV's one sheet after the file: "document" showed as the sheet of every XLSX
    // and in the page header of every PDF made from a CSV.
    baseName: inExt === 'csv' ? sheetBaseName(input.name) : undefined,
    workDir: job.workDir,
    signal: job.signal,
  });
  await copyFile(out, outPath);
  await rm(path.dirname(path.dirname(out)), { recursive: true, force: true });
  return { sheetsLeftOut: listed.filter((_, k) => k !== chosen).map((sh) => sh.name) };
}
