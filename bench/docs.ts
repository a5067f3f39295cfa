/**
 * Documents: kiln's warm helpers against the same engines started cold per call, the way a script
 * would call them.
 *   - DOCX → PDF: kiln in process through its warm LibreOffice pool (calls after the first), the kiln
 *     CLI (starts its own instance), `soffice --headless --convert-to pdf` per call,
 *   - Markdown → PDF: kiln (pandoc + its warm Chromium) against pandoc → HTML + `chromium --print-to-pdf`.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Bench, dir, have, heavy, kilnCli, kilnRun, requireOutput, shAsync, type BenchOptions, type FamilyResult } from './lib.js';

const LOREM =
  'Kiln turns documents into PDFs without sending them anywhere. This sentence is here to fill lines, wrap paragraphs and make the layout engine work a little.';

export async function makeDocx(p: string, paragraphs: number): Promise<string> {
  if (existsSync(p)) return p;
  const { Document, Packer, Paragraph, TextRun, HeadingLevel, Table, TableRow, TableCell } = await import('docx');
  const children: InstanceType<typeof Paragraph | typeof Table>[] = [];
  for (let i = 1; i <= paragraphs; i++) {
    if (i % 10 === 1) children.push(new Paragraph({ text: `Section ${Math.ceil(i / 10)}`, heading: HeadingLevel.HEADING_1 }));
    children.push(new Paragraph({ children: [new TextRun({ text: `${i}. `, bold: true }), new TextRun(`${LOREM} ${LOREM}`)] }));
  }
  children.push(
    new Table({
      rows: Array.from(
        { length: 12 },
        (_, r) =>
          new TableRow({
            children: Array.from({ length: 4 }, (_, c) => new TableCell({ children: [new Paragraph(`r${r + 1} c${c + 1}`)] })),
          }),
      ),
    }),
  );
  const doc = new Document({ sections: [{ children }] });
  writeFileSync(p, await Packer.toBuffer(doc));
  return p;
}

export function makeMarkdown(p: string, sections: number): string {
  if (existsSync(p)) return p;
  let md = '# Benchmark notes\n\n';
  for (let s = 1; s <= sections; s++) {
    md += `## Section ${s}\n\n${LOREM}\n\n- item one\n- item **two**\n- item \`three\`\n\n`;
    md +=
      '| name | value | note |\n|------|------:|------|\n' +
      Array.from({ length: 5 }, (_, r) => `| row ${r} | ${r * s} | ${LOREM.slice(0, 30)} |`).join('\n') +
      '\n\n';
    md += '```ts\nexport function add(a: number, b: number): number {\n  return a + b;\n}\n```\n\n';
  }
  writeFileSync(p, md);
  return p;
}

export async function benchDocs(o: BenchOptions): Promise<FamilyResult> {
  const b = new Bench(o, 'docs');
  const out = dir(o.outDir, 'docs');
  const fx = dir(o.fixDir, 'docs');
  // Quit the warm helpers this run started, so the process can exit and the next family runs alone.
  const { shutdownOffice } = await import('../src/engines/office.js');
  const { shutdownChromium } = await import('../src/engines/chromium.js');
  try {
    const md = makeMarkdown(path.join(fx, o.smoke ? 'notes-2.md' : 'notes-12.md'), o.smoke ? 2 : 12);
    b.heading(`Markdown → PDF (${o.smoke ? 2 : 12} sections with tables and code)`);
    const chromeProfile = mkdtempSync(path.join(out, 'chromium-'));
    await b.time(
      'byhand-md',
      'pandoc → HTML + chromium --print-to-pdf',
      async (i) => {
        const html = path.join(out, `md${i}.html`);
        const pdf = path.join(out, `md${i}.pdf`);
        await shAsync('pandoc', ['--standalone', '--metadata', 'title=notes', '-f', 'markdown', '-t', 'html5', '-o', html, md]);
        await shAsync(
          'chromium',
          [
            '--headless',
            '--no-sandbox',
            '--disable-gpu',
            `--user-data-dir=${chromeProfile}`,
            '--no-pdf-header-footer',
            `--print-to-pdf=${pdf}`,
            pathToFileURL(html).href,
          ],
          { timeoutMs: 120_000 },
        );
        requireOutput(pdf);
      },
      heavy(o),
    );
    await b.time('kiln-md', 'kiln runTool markdown-to-pdf (warm Chromium)', () => kilnRun(o, 'markdown-to-pdf', [md]), {
      n: o.quick ? 2 : o.n,
    });
    if (!o.smoke)
      await b.time(
        'cli-md',
        'kiln CLI markdown-to-pdf (starts Chromium)',
        (i) => kilnCli(['markdown-to-pdf', md, '-o', path.join(out, `kmd${i}.pdf`), '-q']),
        heavy(o),
      );
    b.ratios([
      ['kiln-md', 'byhand-md', 'a warm browser against one started per call'],
      ['cli-md', 'byhand-md'],
    ]);
    if (o.smoke) return b.result;

    const docx = await makeDocx(path.join(fx, 'report-60.docx'), 60);
    b.heading('DOCX → PDF (60 paragraphs and a table, about 6 pages)');
    const n = o.quick ? 1 : 3;
    const loProfile = pathToFileURL(mkdtempSync(path.join(out, 'lo-profile-'))).href;
    const soffice = have('soffice') ? 'soffice' : 'libreoffice';
    // The first call creates the profile; the timed ones are what every later script call costs.
    await b.time(
      'soffice-docx',
      'soffice --headless --convert-to pdf (per call)',
      async (i) => {
        const d = dir(out, `so${i}`);
        await shAsync(
          soffice,
          [`-env:UserInstallation=${loProfile}`, '--headless', '--norestore', '--convert-to', 'pdf', '--outdir', d, docx],
          { timeoutMs: 180_000 },
        );
        requireOutput(path.join(d, 'report-60.pdf'));
      },
      { n },
    );
    const t0 = Date.now();
    try {
      await kilnRun(o, 'wordprocessor-to-pdf', [docx]);
      o.print(`  ${'kiln runTool, first call (starts the pool)'.padEnd(46)} ${(Date.now() - t0).toFixed(1).padStart(9)} ms`);
    } catch {
      // The timed case below reports the failure.
    }
    await b.time('kiln-docx', 'kiln runTool wordprocessor-to-pdf (warm pool)', () => kilnRun(o, 'wordprocessor-to-pdf', [docx]), {
      n,
      warmup: false,
    });
    await shutdownOffice();
    await b.time(
      'cli-docx',
      'kiln CLI wordprocessor-to-pdf (cold instance)',
      (i) => kilnCli(['wordprocessor-to-pdf', docx, '-o', path.join(out, `kd${i}.pdf`), '-q']),
      heavy(o),
    );
    b.ratios([
      ['kiln-docx', 'soffice-docx', 'the warm pool against a cold soffice per call'],
      ['cli-docx', 'soffice-docx'],
    ]);
    rmSync(chromeProfile, { recursive: true, force: true });
    return b.result;
  } finally {
    await shutdownChromium().catch(() => undefined);
    await shutdownOffice().catch(() => undefined);
  }
}
