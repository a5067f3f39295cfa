import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { generatedFiles } from '../../src/cli/gen/files.js';
import { kiln, REPO } from '../helpers/cli.js';

function has(bin: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${bin}`]).status === 0;
}

/** Runs the checked-in bash completion the way bash would for the words typed so far. */
function complete(words: string[], cwd = REPO): string[] {
  const script = `
source completions/kiln.bash
complete -p kiln
COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')})
COMP_CWORD=${words.length - 1}
COMP_LINE='${words.join(' ')}'
COMP_POINT=\${#COMP_LINE}
_kiln kiln "${words.at(-1)}" "${words.at(-2) ?? ''}"
printf '%s\\n' "\${COMPREPLY[@]}"
`;
  const r = spawnSync('bash', ['--norc', '--noprofile', '-c', script], { cwd: REPO, encoding: 'utf8', env: { ...process.env, HOME: cwd } });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.split('\n').filter(Boolean);
  assert.match(lines[0]!, /^complete -F _kiln kiln$/);
  return lines.slice(1);
}

describe('generated completions and man page', () => {
  it('the checked-in files are what scripts/generate.ts makes now', () => {
    for (const [rel, content] of Object.entries(generatedFiles())) {
      const onDisk = readFileSync(path.join(REPO, rel), 'utf8');
      assert.ok(
        onDisk === content,
        `${rel} is stale: the tool catalog changed. Run \`npm run gen\` (after \`npx tsc -p .\`) and commit completions/ and man/.`,
      );
    }
  });

  it('kiln completion <shell> prints the same scripts', async () => {
    const files = generatedFiles();
    for (const [shell, file] of [
      ['bash', 'completions/kiln.bash'],
      ['zsh', 'completions/_kiln'],
      ['fish', 'completions/kiln.fish'],
    ] as const) {
      const r = await kiln(['completion', shell]);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(r.stdout === files[file], `kiln completion ${shell} differs from what the generator makes`);
    }
    const bad = await kiln(['completion', 'tcsh']);
    assert.equal(bad.code, 2, bad.stderr);
  });

  it('bash completes tool names, flags, enum values and files', () => {
    const tools = complete(['kiln', 'res']);
    assert.ok(tools.includes('resize'), tools.join(' '));
    assert.ok(tools.every((t) => t.startsWith('res')));
    const flags = complete(['kiln', 'resize', '--fi']);
    assert.deepEqual(flags.sort(), ['--file-id', '--fit']);
    const fit = complete(['kiln', 'resize', 'a.png', '--fit', 'co']);
    assert.deepEqual(fit.sort(), ['contain', 'cover']);
    // Input files: a path prefix completes to the files there.
    const files = complete(['kiln', 'resize', 'package.js']);
    assert.ok(files.includes('package.json'), files.join(' '));
    assert.deepEqual(complete(['kiln', 'completion', 'z']), ['zsh']);
    assert.deepEqual(complete(['kiln', 'jobs', 'w']), ['watch']);
    assert.ok(complete(['kiln', 'jobs', 'download', '--']).includes('--server'));
    assert.ok(
      complete(['kiln', 'jpg-to-p']).includes('jpg-to-png') ||
        !readFileSync(path.join(REPO, 'completions/kiln.bash'), 'utf8').includes('jpg-to-png'),
    );
  });

  it('the zsh and fish scripts parse', () => {
    if (has('zsh')) assert.equal(spawnSync('zsh', ['-n', 'completions/_kiln'], { cwd: REPO }).status, 0);
    if (has('fish')) {
      assert.equal(spawnSync('fish', ['--no-execute', 'completions/kiln.fish'], { cwd: REPO }).status, 0);
      const fish = (line: string) =>
        spawnSync('fish', ['--no-config', '-c', `source completions/kiln.fish; complete -C '${line}'`], { cwd: REPO, encoding: 'utf8' })
          .stdout.split('\n')
          .filter(Boolean)
          .map((l) => l.split('\t')[0]);
      assert.ok(fish('kiln res').includes('resize'));
      assert.deepEqual(fish('kiln resize --fi').sort(), ['--file-id', '--fit']);
      assert.deepEqual(fish('kiln resize x.png --fit co').sort(), ['contain', 'cover']);
    }
    const zsh = readFileSync(path.join(REPO, 'completions/_kiln'), 'utf8');
    assert.match(zsh, /^#compdef kiln/);
    assert.match(zsh, /'--fit=\[[^\]]*\]:value:\(cover contain fill inside outside\)'/);
    const fish = readFileSync(path.join(REPO, 'completions/kiln.fish'), 'utf8');
    assert.match(fish, /__fish_seen_subcommand_from resize' -l fit -x -a 'cover contain fill inside outside'/);
  });

  it('the man page is valid roff and lists tools, settings and exit codes', (t) => {
    const page = readFileSync(path.join(REPO, 'man/kiln.1'), 'utf8');
    for (const s of [
      '.SH NAME',
      '.SH SYNOPSIS',
      '.SH DESCRIPTION',
      '.SH TOOLS',
      '.SH PRESETS',
      '.SH EXIT STATUS',
      '.SH ENVIRONMENT',
      '.SH FILES',
      '.SH EXAMPLES',
    ])
      assert.ok(page.includes(`\n${s}\n`), s);
    assert.match(page, /\\fB\\-\\-width\\fR \\fIn\\fR\n.*integer 1\\-16383/);
    if (!has('groff')) return t.skip('groff is not installed (apt-get install groff-base)');
    const g = spawnSync('groff', ['-man', '-Tutf8', '-ww', '-z', 'man/kiln.1'], { cwd: REPO, encoding: 'utf8' });
    assert.equal(g.status, 0);
    assert.equal(g.stderr, '', g.stderr);
    if (has('man')) {
      const m = spawnSync('man', ['--warnings', '-l', 'man/kiln.1'], {
        cwd: REPO,
        encoding: 'utf8',
        env: { ...process.env, MANPAGER: 'cat', MANWIDTH: '100' },
      });
      assert.equal(m.status, 0, m.stderr);
      assert.equal(m.stderr, '', m.stderr);
      assert.match(m.stdout, /EXIT STATUS[\s\S]*130[\s\S]*Interrupted/);
      assert.match(m.stdout, /kiln resize/);
    }
  });
});
