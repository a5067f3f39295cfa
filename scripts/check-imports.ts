/**
 * The import rules of ../shared/design/ARCHITECTURE.md, checked: imports run one way,
 * bin → cli → daemon → mcp/pipelines/watch → tools → ai/engines → core, and no source file takes part in
 * an import cycle. Prints each violation and exits 1 when there is one; `npm test` runs it first.
 *
 * TypeScript 7 has no `ts.preProcessFile`; its scanner (typescript/unstable/ast/scanner) is the same
 * tokeniser preProcessFile used, so the import statements are read the same way, without a parser or a
 * new dependency.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SyntaxKind } from 'typescript/unstable/ast';
import { createScanner } from 'typescript/unstable/ast/scanner';

/** Top to bottom: a file may import its own layer and the layers below it, never one above. */
const LAYERS: { name: string; dirs: string[] }[] = [
  { name: 'bin', dirs: ['bin'] },
  { name: 'cli', dirs: ['src/cli'] },
  { name: 'daemon', dirs: ['daemon'] },
  { name: 'mcp/pipelines/watch', dirs: ['src/mcp', 'src/pipelines', 'src/watch'] },
  { name: 'tools', dirs: ['src/tools'] },
  { name: 'ai/engines', dirs: ['src/ai', 'src/engines'] },
  { name: 'core', dirs: ['src/core'] },
];
/** Checked for cycles, free to import any layer. */
const FREE = ['test', 'bench', 'scripts'];
const SOURCE = /\.(ts|tsx|mts)$/;

export interface ImportRef {
  specifier: string;
  line: number;
  /** `import type …` / `export type … from`: no module is loaded at run time. */
  typeOnly: boolean;
  /** `import('…')`: loaded when it runs, so it makes no cycle at load time. */
  dynamic: boolean;
}

/** The module specifiers a TypeScript file imports or re-exports, as ts.preProcessFile found them. */
export function importsOf(text: string): ImportRef[] {
  const s = createScanner(true);
  s.setText(text);
  const lineStarts: number[] = [0];
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 10) lineStarts.push(i + 1);
  const lineOf = (pos: number) => {
    let lo = 0;
    let hi = lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (lineStarts[mid]! <= pos) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
  const out: ImportRef[] = [];
  // Braces opened inside template literals: a `}` there resumes the template, not the code.
  const braces: ('code' | 'template')[] = [];
  let prev = SyntaxKind.Unknown as SyntaxKind;
  let token = SyntaxKind.Unknown as SyntaxKind;
  const isString = (k: SyntaxKind) => k === SyntaxKind.StringLiteral || k === SyntaxKind.NoSubstitutionTemplateLiteral;
  // A scanner that stops advancing (a template it cannot follow) ends the file rather than spin.
  let lastEnd = -1;
  const next = (): SyntaxKind => {
    prev = token;
    token = s.scan();
    const end = s.getTokenEnd();
    if (end <= lastEnd && token !== SyntaxKind.EndOfFile) {
      token = SyntaxKind.EndOfFile;
      return token;
    }
    lastEnd = end;
    if (token === SyntaxKind.TemplateHead) braces.push('template');
    else if (token === SyntaxKind.OpenBraceToken) braces.push('code');
    else if (token === SyntaxKind.CloseBraceToken) {
      if (braces.pop() === 'template') {
        token = s.reScanTemplateToken(false);
        if (token === SyntaxKind.TemplateMiddle) braces.push('template');
      }
    } else if ((token === SyntaxKind.SlashToken || token === SyntaxKind.SlashEqualsToken) && startsExpression(prev)) {
      token = s.reScanSlashToken();
    }
    return token;
  };
  // `from 'x'` closing an import or export clause; false when the statement has none (`export { a };`, `export type A = …`).
  const fromClause = (typeOnly: boolean): boolean => {
    let depth = 0;
    for (let k = token; k !== SyntaxKind.EndOfFile; k = next()) {
      if (depth === 0 && k === SyntaxKind.FromKeyword) {
        if (isString(next())) out.push({ specifier: s.getTokenValue(), line: lineOf(s.getTokenStart()), typeOnly, dynamic: false });
        return true;
      }
      if (depth === 0 && (k === SyntaxKind.SemicolonToken || k === SyntaxKind.EqualsToken || prev === SyntaxKind.CloseBraceToken)) {
        return false;
      }
      if (k === SyntaxKind.OpenBraceToken) depth++;
      else if (k === SyntaxKind.CloseBraceToken && --depth < 0) return false;
    }
    return false;
  };
  while (next() !== SyntaxKind.EndOfFile) {
    if (prev === SyntaxKind.DotToken) continue;
    if (token === SyntaxKind.ImportKeyword) {
      const k = next();
      if (k === SyntaxKind.OpenParenToken) {
        if (isString(next())) out.push({ specifier: s.getTokenValue(), line: lineOf(s.getTokenStart()), typeOnly: false, dynamic: true });
      } else if (isString(k)) {
        out.push({ specifier: s.getTokenValue(), line: lineOf(s.getTokenStart()), typeOnly: false, dynamic: false });
      } else if (k !== SyntaxKind.DotToken) {
        const typeOnly = k === SyntaxKind.TypeKeyword;
        fromClause(typeOnly);
      }
    } else if (token === SyntaxKind.ExportKeyword) {
      const k = next();
      if (k === SyntaxKind.AsteriskToken || k === SyntaxKind.OpenBraceToken || k === SyntaxKind.TypeKeyword) {
        fromClause(k === SyntaxKind.TypeKeyword);
      }
    }
  }
  return out;
}

/** After these tokens a `/` starts a regular expression, not a division. */
function startsExpression(prev: SyntaxKind): boolean {
  switch (prev) {
    case SyntaxKind.Identifier:
    case SyntaxKind.NumericLiteral:
    case SyntaxKind.BigIntLiteral:
    case SyntaxKind.StringLiteral:
    case SyntaxKind.NoSubstitutionTemplateLiteral:
    case SyntaxKind.TemplateTail:
    case SyntaxKind.RegularExpressionLiteral:
    case SyntaxKind.CloseParenToken:
    case SyntaxKind.CloseBracketToken:
    case SyntaxKind.CloseBraceToken:
    case SyntaxKind.ThisKeyword:
    case SyntaxKind.SuperKeyword:
    case SyntaxKind.TrueKeyword:
    case SyntaxKind.FalseKeyword:
    case SyntaxKind.NullKeyword:
    case SyntaxKind.PlusPlusToken:
    case SyntaxKind.MinusMinusToken:
    case SyntaxKind.ExclamationToken:
      return false;
    default:
      return true;
  }
}

function sourceFiles(root: string, dir: string): string[] {
  const out: string[] = [];
  const abs = path.join(root, dir);
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(abs, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    if (e.name === 'node_modules' || e.name === 'dist' || e.name.startsWith('.')) continue;
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...sourceFiles(root, rel));
    else if (SOURCE.test(e.name) && !e.name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/** The source file a relative specifier names: `./a.js` is `./a.ts` (NodeNext), a directory its index. */
function resolve(root: string, from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = path.join(path.dirname(from), specifier);
  const stem = base.replace(/\.(m?js|jsx)$/, '');
  for (const c of [base, `${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, path.join(base, 'index.ts')]) {
    try {
      if (SOURCE.test(c) && statSync(path.join(root, c)).isFile()) return path.normalize(c);
    } catch {}
  }
  return undefined;
}

function layerOf(file: string): number | undefined {
  const i = LAYERS.findIndex((l) => l.dirs.some((d) => file === d || file.startsWith(`${d}/`)));
  return i < 0 ? undefined : i;
}

export interface Violation {
  file: string;
  line: number;
  message: string;
}

export function checkImports(root: string): Violation[] {
  const dirs = [...LAYERS.flatMap((l) => l.dirs), ...FREE];
  const files = dirs
    .flatMap((d) => sourceFiles(root, d))
    .sort()
    // Generated code (marked as such on its first line) is rewritten by its generator, not held to these rules.
    .filter((f) => !/^\/\/.*@generated/.test(readFileSync(path.join(root, f), 'utf8').slice(0, 200)));
  const violations: Violation[] = [];
  const edges = new Map<string, { to: string; line: number }[]>();
  for (const file of files) {
    const from = layerOf(file);
    const list: { to: string; line: number }[] = [];
    for (const ref of importsOf(readFileSync(path.join(root, file), 'utf8'))) {
      const to = resolve(root, file, ref.specifier);
      if (!to) continue;
      const target = layerOf(to);
      if (from !== undefined && target !== undefined && target < from) {
        violations.push({
          file,
          line: ref.line,
          message: `${LAYERS[from]!.name} imports ${LAYERS[target]!.name} (${to}): imports run ${LAYERS.map((l) => l.name).join(' → ')}`,
        });
      } else if (from !== undefined && FREE.some((d) => to.startsWith(`${d}/`))) {
        violations.push({ file, line: ref.line, message: `program code imports ${to}, which is outside the program` });
      }
      if (!ref.typeOnly && !ref.dynamic) list.push({ to, line: ref.line });
    }
    edges.set(file, list);
  }
  for (const cycle of cycles(edges)) {
    const first = edges.get(cycle[0]!)!.find((e) => e.to === cycle[1])!;
    violations.push({ file: cycle[0]!, line: first.line, message: `import cycle: ${[...cycle].join(' → ')}` });
  }
  return violations;
}

/** Each strongly connected group of files (Tarjan), as one cycle through it, closed on its first file. */
function cycles(edges: Map<string, { to: string }[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  let n = 0;
  const visit = (v: string) => {
    index.set(v, n);
    low.set(v, n++);
    stack.push(v);
    onStack.add(v);
    for (const { to } of edges.get(v) ?? []) {
      if (!index.has(to)) {
        visit(to);
        low.set(v, Math.min(low.get(v)!, low.get(to)!));
      } else if (onStack.has(to)) low.set(v, Math.min(low.get(v)!, index.get(to)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        group.push(w);
      } while (w !== v);
      const self = edges.get(v)?.some((e) => e.to === v);
      if (group.length > 1 || self) groups.push(group);
    }
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) visit(v);
  // Show one concrete path around each group: from its first file, follow edges that stay inside it.
  return groups.map((g) => {
    const members = new Set(g);
    const start = [...g].sort()[0]!;
    const pathTo = (target: string): string[] => {
      const prevOf = new Map<string, string>();
      const queue = [start];
      while (queue.length) {
        const v = queue.shift()!;
        for (const { to } of edges.get(v) ?? []) {
          if (!members.has(to)) continue;
          if (to === target) {
            const p = [to];
            for (let x: string | undefined = v; x !== undefined && x !== start; x = prevOf.get(x)) p.unshift(x);
            return [start, ...p];
          }
          if (!prevOf.has(to) && to !== start) {
            prevOf.set(to, v);
            queue.push(to);
          }
        }
      }
      return [start, start];
    };
    const p = pathTo(start);
    return p.length === 2 && p[1] === start && g.length > 1 ? [...g, g[0]!] : p;
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  // dist/scripts/check-imports.js → the checkout; run from source with tsx it is scripts/.
  const here = path.dirname(fileURLToPath(import.meta.url));
  const root = path.resolve(here, here.includes(`${path.sep}dist${path.sep}`) ? '../..' : '..');
  const found = checkImports(root);
  for (const v of found) console.error(`${v.file}:${v.line}: ${v.message}`);
  if (found.length) {
    console.error(`check-imports: ${found.length} violation${found.length === 1 ? '' : 's'}`);
    process.exit(1);
  }
}
