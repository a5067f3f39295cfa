/**
 * pandoc (Debian 2.17) for Markdown, EPUB, DOCX and HTML conversions. A document must never pull in
 * local files or fetch URLs. The HTML and Markdown writers run with `--sandbox` (readers and writers
 * may read only the files named on the command line). pandoc 2.17's sandbox also hides its own data
 * files, which the DOCX and EPUB writers need, so those go through pandocTwoPass(): a sandboxed read
 * whose filter removes every image that is not part of the document and every metadata field that
 * names a file (cover image, CSS, includes), then an unsandboxed write from the cleaned AST.
 * There is no LaTeX here: PDFs go through Chromium (engines/chromium.ts).
 *
 * Markdown is read without raw HTML/TeX (it is rendered as text), and a Lua filter drops links and
 * images with script URLs, so the HTML we write is safe to open. Output HTML carries a restrictive
 * Content-Security-Policy and a clean default stylesheet; code is highlighted by pandoc (skylighting).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { KilnError } from '../core/errors.js';
import { exec } from '../core/process.js';
import { checkTextSize, detectTextEncoding, readTextFile } from '../core/text-encoding.js';
import { requireEngine } from './registry.js';

export const MARKDOWN_IN =
  'markdown-raw_html-raw_tex-raw_attribute+pipe_tables+grid_tables+backtick_code_blocks+fenced_code_attributes+autolink_bare_uris+strikeout+task_lists';

export const STYLESHEET = `
:root { color-scheme: light; }
html { font-size: 16px; background: #fff; }
body { font-family: "DejaVu Sans", "Liberation Sans", "Noto Sans", Arial, sans-serif; line-height: 1.55; color: #1f2328; background: #fff;
  max-width: 46rem; margin: 2rem auto; padding: 0 1.25rem; }
h1, h2, h3, h4, h5, h6 { line-height: 1.25; margin: 1.6em 0 0.6em; font-weight: 600; }
h1 { font-size: 2em; border-bottom: 1px solid #d0d7de; padding-bottom: .3em; }
h2 { font-size: 1.5em; border-bottom: 1px solid #d0d7de; padding-bottom: .3em; }
p, ul, ol, table, pre, blockquote { margin: 0 0 1em; }
a { color: #0969da; text-decoration: none; }
img { max-width: 100%; }
blockquote { margin-left: 0; padding: 0 1em; color: #57606a; border-left: .25em solid #d0d7de; }
code { font-family: "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: .875em; background: #f6f8fa; padding: .15em .35em; border-radius: 4px; }
pre { background: #f6f8fa; padding: 1em; border-radius: 6px; overflow-x: auto; line-height: 1.45; }
div.sourceCode { background: #f6f8fa; border-radius: 6px; margin: 0 0 1em; }
div.sourceCode pre.sourceCode, pre.sourceCode { background: #f6f8fa; padding: 1em; margin: 0; }
pre code { background: none; padding: 0; font-size: .85em; white-space: pre-wrap; }
table { border-collapse: collapse; width: auto; }
th, td { border: 1px solid #d0d7de; padding: .4em .8em; text-align: left; vertical-align: top; }
thead th { background: #f6f8fa; font-weight: 600; }
tbody tr:nth-child(2n) { background: #fbfcfd; }
hr { border: 0; border-top: 1px solid #d0d7de; margin: 2em 0; }
@media print { body { margin: 0; max-width: none; } pre, table, img { break-inside: avoid; } h1, h2, h3 { break-after: avoid; } }
`;

const CSP = "default-src 'none'; img-src data: https: http:; style-src 'unsafe-inline'; font-src data:";

const SAFE_LINKS_LUA = `
local function unsafe(u)
  local s = (u or ''):lower():gsub('%s', '')
  return s:match('^javascript:') or s:match('^vbscript:') or s:match('^data:text/html') or s:match('^file:')
end
function Link(el) if unsafe(el.target) then return el.content end end
function Image(el) if unsafe(el.src) then return {} end end
`;

const NO_FETCH_LUA = `
-- Relative paths can only name media of the input document (EPUB/DOCX) or the empty resource dir;
-- absolute paths, parent references and URLs could reach the machine's files or the network.
local function inside(src)
  if src:match('^data:') then return true end
  if src:match('^%a[%w+.-]*:') or src:match('^/') or src:match('^\\\\') or src:match('%.%.') then return false end
  return true
end
function Image(el)
  if inside(el.src or '') then return nil end
  return pandoc.Emph({ pandoc.Str('[image: ' .. pandoc.utils.stringify(el) .. ']') })
end
-- Raw HTML (an EPUB's <iframe>, <video>, <object>…) that names a resource: the write pass runs outside
-- the sandbox, and --self-contained (and the EPUB writer) would fetch it, inlining file:///etc/passwd.
local RESOURCE_WORDS = { 'src', 'href', 'data', 'poster', 'url(', '@import', 'background', 'action' }
local function raw(el)
  if not el.format:match('^html') then return nil end
  local t = el.text:lower()
  for _, w in ipairs(RESOURCE_WORDS) do if t:find(w, 1, true) then return {} end end
  return nil
end
RawInline = raw
RawBlock = raw
local FILE_FIELDS = { 'css', 'epub-css', 'stylesheet', 'cover-image', 'epub-cover-image', 'coverimage', 'header-includes',
  'include-before', 'include-after', 'epub-embedded-fonts', 'epub-fonts', 'reference-doc', 'bibliography', 'csl', 'abstract-title-file' }
function Meta(m)
  for _, k in ipairs(FILE_FIELDS) do m[k] = nil end
  return m
end
`;

export interface PandocJob {
  workDir: string;
  /** The document's title where it has none of its own (plain text). */
  title?: string;
  signal?: AbortSignal;
  timeoutMs?: number;
}

/** The `from` of a plain text input: pandoc has no plain-text reader, so kiln hands it over as HTML (textToHtml). */
export const PLAIN_TEXT_IN = 'kiln-plain-text';

/**
 * A user's input as pandoc reads it, and the reader to read it with. A text input above
 * KILN_MAX_TEXT_BYTES is refused from its size (core/text-encoding.ts). pandoc reads text as UTF-8
 * (falling back to Latin-1): a UTF-16 file (Notepad's and Excel's "Unicode") came out as "ÿþ# c a f é"
 * with NULs, and Windows-1252 quotes and € as C1 controls. Such an input is handed over as a UTF-8 copy
 * in the job directory, plain text as HTML; ZIP containers (DOCX, EPUB) go as they are.
 */
async function pandocInput(input: string, from: string, job: PandocJob): Promise<{ file: string; from: string }> {
  if (from === 'docx' || from === 'epub' || from === 'json') return { file: input, from };
  await checkTextSize(input);
  if (from === PLAIN_TEXT_IN) {
    const html = path.join(job.workDir, 'kiln-text.html');
    await writeFile(html, textToHtml(await readTextFile(input), job.title ?? path.parse(input).name));
    return { file: html, from: 'html' };
  }
  if ((await detectTextEncoding(input)) === 'utf-8') return { file: input, from };
  const copy = path.join(job.workDir, `kiln-input-utf8${path.extname(input)}`);
  await writeFile(copy, await readTextFile(input));
  return { file: copy, from };
}

export async function pandoc(args: string[], job: PandocJob): Promise<string> {
  const bin = await requireEngine('pandoc');
  const r = await exec(bin, ['--sandbox', ...args], {
    cwd: job.workDir,
    signal: job.signal,
    timeoutMs: job.timeoutMs ?? 120_000,
    failCode: 'UNSUPPORTED_INPUT',
  });
  return r.stdout;
}

/**
 * For the DOCX and EPUB writers, which cannot run sandboxed in pandoc 2.17 (their data files are hidden
 * too): read in the sandbox to pandoc's JSON AST, with the no-fetch filter and the input's own media
 * extracted into the job directory; then write from that JSON, where the only images left are those
 * extracted files. pandoc fetches images before filters run, so a one-pass filter would be too late.
 */
async function pandocTwoPass(input: string, from: string, writerArgs: string[], job: PandocJob, readerArgs: string[] = []): Promise<void> {
  const bin = await requireEngine('pandoc');
  ({ file: input, from } = await pandocInput(input, from, job));
  const filter = path.join(job.workDir, 'kiln-no-fetch.lua');
  await writeFile(filter, NO_FETCH_LUA);
  const ast = path.join(job.workDir, 'kiln-ast.json');
  const opts = { cwd: job.workDir, signal: job.signal, timeoutMs: job.timeoutMs ?? 120_000, failCode: 'UNSUPPORTED_INPUT' as const };
  await exec(
    bin,
    ['--sandbox', '-f', from, '-t', 'json', ...readerArgs, '--lua-filter', filter, '--extract-media=kiln-media', '-o', ast, input],
    opts,
  );
  await exec(bin, ['-f', 'json', `--resource-path=${job.workDir}`, ...writerArgs, ast], opts);
}

/** Files the HTML writers need: the header (style, CSP) and the link filter, written once per job. */
async function htmlExtras(workDir: string): Promise<{ header: string; filter: string }> {
  const header = path.join(workDir, 'kiln-header.html');
  const filter = path.join(workDir, 'kiln-safe-links.lua');
  await writeFile(header, `<meta http-equiv="Content-Security-Policy" content="${CSP}">\n<style>${STYLESHEET}</style>\n`);
  await writeFile(filter, SAFE_LINKS_LUA);
  return { header, filter };
}

/** Standalone HTML5 page from Markdown, EPUB, DOCX or HTML; `selfContained` inlines images (EPUB). */
export async function toStandaloneHtml(
  input: string,
  from: string,
  outPath: string,
  job: PandocJob & { title: string; selfContained?: boolean },
): Promise<void> {
  const { header, filter } = await htmlExtras(job.workDir);
  const writer = [
    '-t',
    'html5',
    '--standalone',
    '--highlight-style=pygments',
    '-H',
    header,
    '--metadata',
    `pagetitle=${job.title}`,
    '-o',
    outPath,
  ];
  // Inlining makes pandoc fetch every image: a remote or absolute one (an EPUB may name any URL) failed
  // the whole run ("Could not fetch http:/…", exit 61), and only the sandbox kept it from reading the
  // machine's files. The two-pass read keeps the document's own media and turns the rest into text.
  if (job.selfContained) await pandocTwoPass(input, from, [...writer, '--self-contained'], job, ['--lua-filter', filter]);
  else {
    const src = await pandocInput(input, from, job);
    await pandoc(['-f', src.from, ...writer, '--lua-filter', filter, src.file], job);
  }
}

/** Writes `metadata.yaml` with a fallback title: the document's own title (if any) wins over it. */
export async function fallbackMetadata(workDir: string, title: string): Promise<string> {
  const p = path.join(workDir, 'kiln-metadata.yaml');
  await writeFile(p, `title: ${JSON.stringify(title)}\nlang: en\n`);
  return p;
}

export async function toDocx(input: string, from: string, outPath: string, job: PandocJob): Promise<void> {
  const { filter } = await htmlExtras(job.workDir);
  await pandocTwoPass(input, from, ['-t', 'docx', '--highlight-style=pygments', '-o', outPath], job, ['--lua-filter', filter]);
}

export async function toEpub(input: string, from: string, outPath: string, job: PandocJob & { title: string }): Promise<void> {
  const { filter } = await htmlExtras(job.workDir);
  const css = path.join(job.workDir, 'kiln-epub.css');
  await writeFile(css, STYLESHEET.replace(/max-width: 46rem; margin: 2rem auto; padding: 0 1.25rem;/, 'margin: 0;'));
  const meta = await fallbackMetadata(job.workDir, job.title);
  await pandocTwoPass(
    input,
    from,
    ['-t', 'epub3', '--metadata-file', meta, '--css', css, '--toc', '--highlight-style=pygments', '-o', outPath],
    job,
    ['--lua-filter', filter],
  );
}

export async function toMarkdown(input: string, from: string, outPath: string, job: PandocJob): Promise<void> {
  const src = await pandocInput(input, from, job);
  await pandoc(['-f', src.from, '-t', 'gfm', '--wrap=none', '-o', outPath, src.file], job);
}

/** Plain text as minimal HTML (paragraphs at blank lines), so pandoc does not read it as Markdown. */
export function textToHtml(text: string, title: string): string {
  const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
  const paras = text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n\s*\r?\n/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => `<p>${esc(p).replace(/\r?\n/g, '<br/>')}</p>`);
  if (!paras.length) throw new KilnError('UNSUPPORTED_INPUT', 'The text file is empty.');
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${esc(title)}</title></head><body>\n${paras.join('\n')}\n</body></html>\n`;
}
