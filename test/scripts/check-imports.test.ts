import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { checkImports, importsOf } from '../../scripts/check-imports.js';
import { REPO } from '../helpers/cli.js';
import { tempDir } from '../helpers/fixtures.js';

describe('check-imports', () => {
  it('reads every kind of import and re-export, and nothing in strings, templates or regexes', () => {
    const refs = importsOf(
      [
        "import type { A } from './a.js';",
        "import B, {\n  c,\n} from './b.js';",
        "export * from './c.js';",
        "export { d } from './d.js';",
        'export { e };',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the source text under test holds a template literal
        "const t = `import x from './no.js' ${ { a: 1 }.a }`;",
        "const r = /'/; const s = \"import y from './nor.js'\";",
        "const f = await import('./f.js');",
        'export type G = { a: 1 };',
        "import './side.js';",
        'import.meta.url;',
        "export type { H } from './h.js';",
      ].join('\n'),
    );
    assert.deepEqual(
      refs.map((r) => [r.specifier, r.line, r.typeOnly, r.dynamic]),
      [
        ['./a.js', 1, true, false],
        ['./b.js', 4, false, false],
        ['./c.js', 5, false, false],
        ['./d.js', 6, false, false],
        ['./f.js', 10, false, true],
        ['./side.js', 12, false, false],
        ['./h.js', 14, true, false],
      ],
    );
  });

  it('reports an upward import and a cycle, and allows downward and dynamic ones', () => {
    const root = tempDir();
    const put = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), text);
    };
    put('src/core/low.ts', "import type { T } from '../tools/tool.js';\nexport const low = 1;\n");
    put('src/tools/tool.ts', "import { low } from '../core/low.js';\nexport type T = number;\nexport const v = low;\n");
    put('src/engines/a.ts', "import { b } from './b.js';\nexport const a = () => b;\n");
    put(
      'src/engines/b.ts',
      "import { a } from './a.js';\nexport const b = () => a;\nexport const later = () => import('../cli/main.js');\n",
    );
    put('src/cli/main.ts', "import { v } from '../tools/tool.js';\nexport default v;\n");
    put('test/x.test.ts', "import main from '../src/cli/main.js';\nexport { main };\n");
    const found = checkImports(root).map((v) => `${v.file}:${v.line}: ${v.message}`);
    assert.deepEqual(found, [
      'src/core/low.ts:1: core imports tools (src/tools/tool.ts): imports run bin → cli → daemon → mcp/pipelines/watch → tools → ai/engines → core',
      'src/engines/b.ts:3: ai/engines imports cli (src/cli/main.ts): imports run bin → cli → daemon → mcp/pipelines/watch → tools → ai/engines → core',
      'src/engines/a.ts:1: import cycle: src/engines/a.ts → src/engines/b.ts → src/engines/a.ts',
    ]);
  });

  // The engine adapters know no tool: not its helpers, not even a type from a tool's _shared folder.
  it('reports an engine in a subfolder that imports tool code, a type-only import too', () => {
    const root = tempDir();
    const put = (file: string, text: string) => {
      mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
      writeFileSync(path.join(root, file), text);
    };
    put('src/tools/video/_shared/transcode-video.ts', 'export type Opts = { vf?: string };\nexport const transcodeVideo = () => 1;\n');
    put(
      'src/engines/ffmpeg/run.ts',
      "import type { Opts } from '../../tools/video/_shared/transcode-video.js';\nimport { transcodeVideo } from '../../tools/video/_shared/transcode-video.js';\nexport const run = (o: Opts) => transcodeVideo() + (o.vf ? 1 : 0);\n",
    );
    const found = checkImports(root).map((v) => `${v.file}:${v.line}: ${v.message.split(':')[0]}`);
    assert.deepEqual(found, [
      'src/engines/ffmpeg/run.ts:1: ai/engines imports tools (src/tools/video/_shared/transcode-video.ts)',
      'src/engines/ffmpeg/run.ts:2: ai/engines imports tools (src/tools/video/_shared/transcode-video.ts)',
    ]);
  });

  it('finds nothing to report in this checkout', () => {
    assert.deepEqual(checkImports(REPO), []);
  });
});
