/**
 * qpdf (Apache-2.0), run as a separate program: page selection in its own range syntax, merge, split,
 * rotation, encryption, linearization, repair. Also the gate every PDF tool passes first (inspectPdf):
 * it tells encrypted and corrupt inputs apart before any other engine sees them.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError, type ErrorCode } from '../core/errors.js';
import { exec, tail, type ExecResult } from '../core/process.js';
import { requireEngine } from './registry.js';

/** Default time-out per qpdf call; page operations are linear in file size and fast. */
const QPDF_TIMEOUT_MS = 120_000;

export interface QpdfOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  failCode?: ErrorCode;
}

/** Runs qpdf. Exit 3 means "succeeded with warnings" (a damaged input qpdf recovered), which is success. */
export async function qpdf(args: string[], o: QpdfOptions = {}): Promise<ExecResult> {
  const bin = await requireEngine('qpdf');
  return exec(bin, ['--no-warn', ...args], {
    signal: o.signal,
    timeoutMs: o.timeoutMs ?? QPDF_TIMEOUT_MS,
    okCodes: [0, 3],
    failCode: o.failCode ?? 'UNSUPPORTED_INPUT',
  }).catch((e: unknown) => {
    // A /Pages node that lists itself passes inspectPdf (its page count does not walk the tree) and stops
    // the operation that does; qpdf's own message names the run's temp path, not the user's file.
    if (e instanceof KilnError && /loop detected/i.test(e.message))
      throw new KilnError('UNSUPPORTED_INPUT', 'The PDF has a damaged page tree (a loop in /Pages). repair-pdf may be able to fix it.', {
        reason: 'pdf-corrupt',
        cause: e,
      });
    throw e;
  });
}

/** qpdf's `--json` output parsed; unreadable JSON is kiln's fault (INTERNAL), never the input's. */
export function parseQpdfJson<T>(text: string, what: string): T {
  try {
    return JSON.parse(text) as T;
  } catch (e) {
    throw new KilnError('INTERNAL', `qpdf gave unreadable JSON for ${what}.`, { cause: e });
  }
}

export interface PdfInfo {
  pages: number;
  /** Encrypted (possibly with an empty user password, i.e. only owner restrictions). */
  encrypted: boolean;
}

/** An engine message with the on-disk path (a private temp path on the server) replaced by the user's file name. */
export function withName(message: string, file: string, name: string): string {
  return message
    .split(file)
    .join(name)
    .replace(/^qpdf failed \(exit \d+\): /, '');
}

export function passwordProtectedError(name: string): KilnError {
  return new KilnError(
    'UNSUPPORTED_INPUT',
    `${name} is password-protected. Remove the password first with unlock-pdf (kiln unlock-pdf ${name} --password …).`,
    {
      reason: 'pdf-encrypted',
    },
  );
}

/**
 * Opens the PDF with qpdf: page count and encryption. A PDF that needs a password, or that qpdf cannot
 * read even after reconstructing its cross-reference table, is UNSUPPORTED_INPUT with a clear message.
 */
export async function inspectPdf(file: string, name: string, signal?: AbortSignal): Promise<PdfInfo> {
  const bin = await requireEngine('qpdf');
  let r: ExecResult;
  try {
    r = await exec(bin, ['--show-encryption', '--show-npages', file], {
      signal,
      timeoutMs: QPDF_TIMEOUT_MS,
      okCodes: [0, 3],
      failCode: 'UNSUPPORTED_INPUT',
    });
  } catch (e) {
    if (e instanceof KilnError && e.code === 'UNSUPPORTED_INPUT') {
      if (/password/i.test(e.message)) throw passwordProtectedError(name);
      throw new KilnError(
        'UNSUPPORTED_INPUT',
        `${name} is not a readable PDF (${withName(e.message, file, name)}). repair-pdf may be able to fix it.`,
        { reason: 'pdf-corrupt' },
      );
    }
    throw e;
  }
  const out = `${r.stdout}\n${r.stderr}`;
  if (/Incorrect password supplied|invalid password/i.test(out)) throw passwordProtectedError(name);
  const pages = Number(/^\s*(\d+)\s*$/m.exec(r.stdout)?.[1]);
  if (!Number.isInteger(pages))
    throw new KilnError('UNSUPPORTED_INPUT', `${name}: qpdf could not count its pages: ${withName(tail(out), file, name)}`, {
      reason: 'pdf-corrupt',
    });
  if (pages === 0) throw new KilnError('UNSUPPORTED_INPUT', `${name} has no pages.`, { reason: 'pdf-empty' });
  return { pages, encrypted: !/File is not encrypted/.test(out) };
}

/**
 * A qpdf job file (qpdf's JSON job format) for operations with secrets: passwords never show up in the
 * process list, and any character works (a password starting with "-" or holding a newline would be
 * misread on a command line). The file lives in the run's private workDir, removed with it.
 */
export async function jobFile(workDir: string, job: Record<string, unknown>): Promise<string> {
  const p = path.join(workDir, `qpdf-job-${process.hrtime.bigint()}.json`);
  await writeFile(p, JSON.stringify(job), { mode: 0o600 });
  return `--job-json-file=${p}`;
}

// ---------------------------------------------------------------------------------------------------
// Page ranges in qpdf's syntax: `1-3,z`, `r1` (last), `r2` (second to last), `5-1` (reversed),
// `1-z:odd` / `1-z:even` (a trailing modifier: odd/even positions of the whole resulting list, as
// qpdf 11 does; `5,1-4:even` is pages 1 and 3). Parsed here so a range is checked
// against the page count before qpdf runs and the error names the page count.

const TOKEN = '(?:r?\\d+|z)';
/** A page selection may list any page more than once, up to twice the PDF's pages or this many in all. */
const MAX_SELECTION_FLOOR = 1000;
const ITEM = new RegExp(`^(${TOKEN})(?:-(${TOKEN}))?$`);

/** Resolves a qpdf range to 1-based page numbers (in order, repeats kept). Empty = all pages. */
export function resolveRange(range: string, pageCount: number, field = 'range'): number[] {
  // `last` (what people type) is qpdf's z; the resolved list, never the user's text, is what reaches qpdf.
  let spec = range.replace(/\s+/g, '').toLowerCase().replace(/last/g, 'z');
  const modifier = /:(odd|even)$/.exec(spec)?.[1];
  if (modifier) spec = spec.slice(0, -modifier.length - 1);
  if (spec === '' && !modifier) return Array.from({ length: pageCount }, (_, i) => i + 1);
  const pages: number[] = [];
  const bad = (msg: string) =>
    new KilnError('VALIDATION_ERROR', `${field} "${range}": ${msg}`, { details: [{ path: field, message: msg }] });
  // Repeats are allowed (organize-pdf may list a page twice), but 2000 characters of "1-z," made a
  // 3000-page PDF into 1.5 million pages: gigabytes for qpdf, from a one-megabyte upload.
  const limit = Math.max(2 * pageCount, MAX_SELECTION_FLOOR);
  const tooMany = () =>
    new KilnError(
      'LIMIT_EXCEEDED',
      `${field} "${range.length > 60 ? `${range.slice(0, 57)}...` : range}" lists more than ${limit} pages (at most twice the ${pageCount} page${pageCount === 1 ? '' : 's'} of the PDF, or ${MAX_SELECTION_FLOOR}).`,
      { details: [{ path: field, message: `more than ${limit} pages` }] },
    );
  const num = (t: string): number => {
    const n = t === 'z' ? pageCount : t.startsWith('r') ? pageCount - Number(t.slice(1)) + 1 : Number(t);
    const shown = t === 'z' ? 'z' : t;
    if (t.startsWith('r') && Number(t.slice(1)) === 0) throw bad('r0 is not a page (r1 is the last page).');
    if (n < 1 || n > pageCount) throw bad(`page ${shown} is out of range: the PDF has ${pageCount} page${pageCount === 1 ? '' : 's'}.`);
    return n;
  };
  for (const item of spec.split(',')) {
    const m = ITEM.exec(item);
    if (!m)
      throw bad(
        `"${item}" is not a page or a range (3-7, 5-z, r3-r1; z or last is the last page); :odd/:even may only end the whole range.`,
      );
    if (m[1] === '0' || m[2] === '0') throw bad('pages are numbered from 1.');
    const a = num(m[1]!);
    const b = m[2] !== undefined ? num(m[2]) : a;
    // Checked before the list grows: a modifier can at most halve it.
    if (pages.length + Math.abs(b - a) + 1 > 2 * limit) throw tooMany();
    if (a <= b) for (let p = a; p <= b; p++) pages.push(p);
    else for (let p = a; p >= b; p--) pages.push(p);
  }
  // qpdf's :odd/:even pick positions in the list (1st, 3rd… / 2nd, 4th…), not page parity.
  const picked = modifier ? pages.filter((_, i) => (modifier === 'odd' ? i % 2 === 0 : i % 2 === 1)) : pages;
  if (picked.length === 0) throw bad('selects no pages.');
  if (picked.length > limit) throw tooMany();
  return picked;
}

/** A list of page numbers as a compact qpdf range (`1-3,7,9-10`). */
export function toRange(pages: number[]): string {
  const parts: string[] = [];
  for (let i = 0; i < pages.length; ) {
    let j = i;
    while (j + 1 < pages.length && pages[j + 1] === pages[j]! + 1) j++;
    parts.push(j > i ? `${pages[i]}-${pages[j]}` : `${pages[i]}`);
    i = j + 1;
  }
  return parts.join(',');
}

/**
 * Draws every annotation's appearance (filled form values, stamps, comments) into its page's content and
 * drops the annotations and the interactive form; appearances are generated first for fields without one.
 */
export async function flattenAnnotations(input: string, out: string, o: QpdfOptions = {}): Promise<void> {
  await qpdf(['--generate-appearances', '--flatten-annotations=all', input, out], o);
}
