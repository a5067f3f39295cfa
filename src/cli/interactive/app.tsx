/**
 * The interactive mode: search a tool, pick input files (Tab completes paths), fill in settings
 * (defaults shown, checked with the tool's own schema before the run), run it with live progress
 * through the same local runner as the command line, and show where the outputs went.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { Box, Text, useApp } from 'ink';
import { useEffect, useMemo, useRef, useState, type Dispatch, type SetStateAction } from 'react';
import { toKilnError, type FieldProblem } from '../../core/errors.js';
import { coerceSettingValue, describeSettings, parseSettings, type SettingInfo } from '../../core/settings.js';
import type { ExtraInput } from '../../core/tool.js';
import { batchExitCode, expandInputs, runLocal, type ItemResult } from '../local-runner.js';
import { choices, search, type Choice } from './catalog.js';
import { completePath } from './path-complete.js';
import { TextInput } from './text-input.js';
import { useKeys } from './use-latest.js';

type Screen = 'tool' | 'files' | 'settings' | 'running' | 'done';

const PAGE = 10;

export interface AppProps {
  cwd?: string;
  /** Called with the exit status of the last run when the app quits. */
  onExit?: (code: number) => void;
}

export function App({ cwd = process.cwd(), onExit }: AppProps) {
  const { exit } = useApp();
  const all = useMemo(() => choices(), []);
  const [screen, setScreen] = useState<Screen>('tool');
  const [choice, setChoice] = useState<Choice>();
  const [files, setFiles] = useState<string[]>([]);
  const [values, setValues] = useState<Record<string, string>>({});
  const [results, setResults] = useState<ItemResult[]>([]);
  const [fatal, setFatal] = useState<string>();
  const [progress, setProgress] = useState<{ percent: number; stage?: string }>({ percent: 0 });
  const lastCode = useRef(0);
  const abort = useRef<AbortController | undefined>(undefined);

  useEffect(() => () => abort.current?.abort(), []);

  const quit = () => {
    onExit?.(lastCode.current);
    exit();
  };

  const start = async (settings: Record<string, unknown>, extra: Record<string, string[]>, output: string | undefined) => {
    const c = choice!;
    setScreen('running');
    setProgress({ percent: 0 });
    setFatal(undefined);
    const ac = new AbortController();
    abort.current = ac;
    try {
      const inputs = await expandInputs(files.map((f) => path.resolve(cwd, f)));
      const r = await runLocal({
        tool: c.tool,
        name: c.name,
        inputs,
        extra: Object.fromEntries(Object.entries(extra).map(([k, v]) => [k, v.map((p) => path.resolve(cwd, p))])),
        settings,
        output: output ? path.resolve(cwd, output) + (output.endsWith('/') ? '/' : '') : undefined,
        quiet: true,
        printData: false,
        signal: ac.signal,
        onProgress: (percent, stage) => setProgress({ percent, stage }),
      });
      setResults(r);
      lastCode.current = batchExitCode(r);
    } catch (e) {
      const err = toKilnError(e);
      setFatal(`${err.message} (${err.code})`);
      lastCode.current = err.exitCode;
    }
    setScreen('done');
  };

  return (
    <Box flexDirection="column">
      <Text bold color="cyan">
        kiln{choice && screen !== 'tool' ? ` › ${choice.name}` : ''}
      </Text>
      {screen === 'tool' && (
        <ToolPicker
          all={all}
          onPick={(c) => {
            setChoice(c);
            setValues({});
            setFiles([]);
            setScreen(c.tool.input.kind === 'none' ? 'settings' : 'files');
          }}
          onQuit={quit}
        />
      )}
      {screen === 'files' && choice && (
        <FilePicker
          choice={choice}
          cwd={cwd}
          files={files}
          setFiles={setFiles}
          onDone={() => setScreen('settings')}
          onBack={() => setScreen('tool')}
        />
      )}
      {screen === 'settings' && choice && (
        <SettingsForm
          choice={choice}
          cwd={cwd}
          values={values}
          setValues={setValues}
          onRun={start}
          onBack={() => setScreen(choice.tool.input.kind === 'none' ? 'tool' : 'files')}
        />
      )}
      {screen === 'running' && (
        <Running name={choice!.name} percent={progress.percent} stage={progress.stage} onCancel={() => abort.current?.abort()} />
      )}
      {screen === 'done' && (
        <Done
          results={results}
          fatal={fatal}
          cwd={cwd}
          onAgain={() => setScreen('settings')}
          onNew={() => {
            setChoice(undefined);
            setScreen('tool');
          }}
          onQuit={quit}
        />
      )}
    </Box>
  );
}

function ToolPicker({ all, onPick, onQuit }: { all: Choice[]; onPick: (c: Choice) => void; onQuit: () => void }) {
  const [query, setQuery] = useState('');
  const [index, setIndex] = useState(0);
  const hits = useMemo(() => search(all, query), [all, query]);
  const sel = Math.min(index, Math.max(0, hits.length - 1));
  useKeys((_input, key) => {
    if (key.upArrow) setIndex(Math.max(0, sel - 1));
    else if (key.downArrow) setIndex(Math.min(hits.length - 1, sel + 1));
    else if (key.pageDown) setIndex(Math.min(hits.length - 1, sel + PAGE));
    else if (key.pageUp) setIndex(Math.max(0, sel - PAGE));
    else if (key.escape) onQuit();
  });
  const first = Math.max(0, Math.min(sel - Math.floor(PAGE / 2), hits.length - PAGE));
  const width = Math.max(...hits.slice(first, first + PAGE).map((h) => h.name.length), 4);
  return (
    <Box flexDirection="column">
      <Box>
        <Text>Tool: </Text>
        <TextInput
          value={query}
          onChange={(v) => {
            setQuery(v);
            setIndex(0);
          }}
          onSubmit={() => hits[sel] && onPick(hits[sel]!)}
          placeholder="type to search (e.g. resize, pdf, mp3)"
        />
      </Box>
      {hits.length === 0 ? <Text color="yellow">No tool matches “{query}”.</Text> : null}
      {hits.slice(first, first + PAGE).map((h, i) => (
        <Text key={h.name} color={first + i === sel ? 'green' : undefined}>
          {first + i === sel ? '❯ ' : '  '}
          {h.name.padEnd(width)} <Text dimColor>{h.summary.slice(0, 70)}</Text>
        </Text>
      ))}
      <Text dimColor>
        {hits.length} of {all.length} · ↑↓ choose · Enter select · Esc quit
      </Text>
    </Box>
  );
}

function FilePicker({
  choice,
  cwd,
  files,
  setFiles,
  onDone,
  onBack,
}: {
  choice: Choice;
  cwd: string;
  files: string[];
  setFiles: Dispatch<SetStateAction<string[]>>;
  onDone: () => void;
  onBack: () => void;
}) {
  const [value, setValue] = useState('');
  const [hint, setHint] = useState<string>();
  const [candidates, setCandidates] = useState<string[]>([]);
  const input = choice.tool.input;
  const min = input.kind === 'files' ? input.min : 1;
  const max = input.kind === 'files' ? input.max : Infinity;
  useKeys((_i, key) => {
    if (key.escape) onBack();
    else if ((key.backspace || key.delete) && value === '' && files.length) setFiles((f) => f.slice(0, -1));
  });
  const submit = async (v: string) => {
    setCandidates([]);
    const p = v.trim();
    if (!p) {
      if (files.length >= min) return onDone();
      return setHint(`${choice.name} needs ${min === 1 ? 'an input file' : `at least ${min} files`}.`);
    }
    let found: string[];
    try {
      found = /[*?]/.test(path.basename(p)) ? await expandInputs([path.resolve(cwd, p)]) : [p];
    } catch (e) {
      return setHint(toKilnError(e).message);
    }
    const abs = found.map((f) => path.resolve(cwd, f));
    const missing = abs.find((f) => !existsSync(f) || statSync(f).isDirectory());
    if (missing) return setHint(`${path.relative(cwd, missing) || missing} is not a file.`);
    if (files.length + abs.length > max) return setHint(`${choice.name} takes at most ${max} files.`);
    setFiles((f) => [...f, ...found]);
    setValue('');
    setHint(undefined);
  };
  return (
    <Box flexDirection="column">
      <Text>
        Input files{' '}
        <Text dimColor>({input.kind === 'files' ? `${min}-${max}, used together` : 'one, or several for a batch; globs work'})</Text>
      </Text>
      {files.map((f) => (
        <Text key={f} color="green">
          {'  ✔ '}
          {f}
        </Text>
      ))}
      <Box>
        <Text>File: </Text>
        <TextInput
          value={value}
          onChange={(v) => {
            setValue(v);
            setCandidates([]);
          }}
          onTab={() => {
            const c = completePath(value, cwd);
            setValue(c.value);
            setCandidates(c.candidates.slice(0, 30));
          }}
          onSubmit={(v) => void submit(v)}
          placeholder={files.length >= min ? 'Enter to continue, or add another file' : 'path (Tab completes)'}
        />
      </Box>
      {candidates.length ? <Text dimColor>{candidates.join('  ')}</Text> : null}
      {hint ? <Text color="yellow">{hint}</Text> : null}
      <Text dimColor>
        Tab complete · Enter add{files.length >= min ? ' / continue when empty' : ''} · Backspace on empty removes the last · Esc back
      </Text>
    </Box>
  );
}

interface Row {
  key: string;
  label: string;
  kind: 'setting' | 'extra' | 'output' | 'run';
  info?: SettingInfo;
  extra?: ExtraInput;
}

function rowsFor(choice: Choice): Row[] {
  const rows: Row[] = describeSettings(choice.tool).map((s) => ({ key: s.name, label: `--${s.flag}`, kind: 'setting', info: s }));
  for (const x of choice.tool.input.extra ?? [])
    rows.push({ key: `@${x.field}`, label: `--${x.flag ?? x.field}`, kind: 'extra', extra: x });
  rows.push({ key: '@output', label: '-o', kind: 'output' }, { key: '@run', label: '▶ Run', kind: 'run' });
  return rows;
}

function hintFor(r: Row): string {
  if (r.kind === 'output') return 'output file or dir/ (empty: current directory)';
  if (r.kind === 'extra') return `${r.extra!.description}${r.extra!.required ? ' (required)' : ''} — Tab completes`;
  const s = r.info!;
  const parts: string[] = [];
  if (s.enum) parts.push(s.enum.length > 6 ? `${s.enum.slice(0, 5).join('|')}|… (${s.enum.length})` : s.enum.join('|'));
  else parts.push(s.type);
  if (s.min !== undefined || s.max !== undefined) parts.push(`${s.min ?? ''}..${s.max ?? ''}`);
  if (s.default !== undefined) parts.push(`default ${JSON.stringify(s.default)}`);
  if (s.required) parts.push('required');
  return parts.join(', ');
}

/** Turns the typed values into settings, validated by the tool's schema. Problems are keyed by setting. */
export function buildSettings(
  choice: Choice,
  values: Record<string, string>,
): { settings?: Record<string, unknown>; problems: Record<string, string> } {
  const raw: Record<string, unknown> = {};
  for (const s of describeSettings(choice.tool)) {
    const v = values[s.name];
    if (v !== undefined && v !== '') raw[s.name] = coerceSettingValue(s, v);
  }
  try {
    parseSettings(choice.tool, raw);
    return { settings: raw, problems: {} };
  } catch (e) {
    const err = toKilnError(e);
    const problems: Record<string, string> = {};
    const details = Array.isArray(err.details) ? (err.details as FieldProblem[]) : [];
    for (const d of details) problems[d.path.split('.')[0] || '@run'] = d.message;
    if (!details.length || Object.keys(problems).every((k) => k === 'settings')) problems['@run'] = err.message;
    return { problems };
  }
}

function SettingsForm({
  choice,
  cwd,
  values,
  setValues,
  onRun,
  onBack,
}: {
  choice: Choice;
  cwd: string;
  values: Record<string, string>;
  setValues: Dispatch<SetStateAction<Record<string, string>>>;
  onRun: (settings: Record<string, unknown>, extra: Record<string, string[]>, output: string | undefined) => void;
  onBack: () => void;
}) {
  const rows = useMemo(() => rowsFor(choice), [choice]);
  const [index, setIndex] = useState(0);
  const [problems, setProblems] = useState<Record<string, string>>({});
  const [candidates, setCandidates] = useState<string[]>([]);
  const row = rows[index]!;
  const set = (key: string, v: string) => {
    setValues((prev) => ({ ...prev, [key]: v }));
    setCandidates([]);
    setProblems((prev) => (prev[key] ? { ...prev, [key]: '' } : prev));
  };
  const move = (d: number) => {
    setIndex((i) => Math.max(0, Math.min(rows.length - 1, i + d)));
    setCandidates([]);
  };
  const run = () => {
    const { settings, problems: p } = buildSettings(choice, values);
    for (const r of rows) {
      if (r.kind !== 'extra') continue;
      const v = values[r.key]?.trim();
      if (r.extra!.required && !v) p[r.key] = 'required';
      else if (v && !existsSync(path.resolve(cwd, v))) p[r.key] = 'no such file';
    }
    setProblems(p);
    const firstBad = rows.findIndex((r) => p[r.key]);
    if (firstBad >= 0 || !settings) {
      if (firstBad >= 0) setIndex(firstBad);
      return;
    }
    const extra: Record<string, string[]> = {};
    for (const r of rows) {
      const v = values[r.key]?.trim();
      if (r.kind === 'extra' && v) extra[r.extra!.field] = r.extra!.indexed ? v.split(/\s+/) : [v];
    }
    onRun(settings, extra, values['@output']?.trim() || undefined);
  };
  const choiceRow = row.kind === 'setting' && (row.info!.enum || row.info!.type === 'boolean');
  useKeys((input, key) => {
    if (key.escape) return onBack();
    if (key.upArrow) return move(-1);
    if (key.downArrow) return move(1);
    if (key.return) return row.kind === 'run' ? run() : move(1);
    if (key.ctrl && input === 'r') return run();
    if (key.tab && !(row.kind === 'extra' || row.kind === 'output')) return move(key.shift ? -1 : 1);
    if (!choiceRow) return;
    const opts = row.info!.enum ? ['', ...row.info!.enum.map(String)] : ['', 'true', 'false'];
    const cur = Math.max(0, opts.indexOf(values[row.key] ?? ''));
    if (key.rightArrow || input === ' ') set(row.key, opts[(cur + 1) % opts.length]!);
    else if (key.leftArrow) set(row.key, opts[(cur - 1 + opts.length) % opts.length]!);
  });
  const width = Math.max(...rows.map((r) => r.label.length));
  const first = Math.max(0, Math.min(index - 7, rows.length - 15));
  return (
    <Box flexDirection="column">
      <Text dimColor>{choice.summary}</Text>
      {first > 0 ? <Text dimColor> ↑ {first} more</Text> : null}
      {rows.slice(first, first + 15).map((r, i) => {
        const active = first + i === index;
        const v = values[r.key] ?? '';
        const problem = problems[r.key];
        if (r.kind === 'run') {
          return (
            <Box key={r.key} flexDirection="column">
              <Text color={active ? 'green' : undefined} bold={active}>
                {active ? '❯ ' : '  '}▶ Run {choice.name}
              </Text>
              {problem ? <Text color="red"> {problem}</Text> : null}
            </Box>
          );
        }
        const isChoice = r.kind === 'setting' && (r.info!.enum || r.info!.type === 'boolean');
        const shown = v || (r.info?.default !== undefined ? String(r.info.default) : '');
        return (
          <Box key={r.key}>
            <Text color={active ? 'green' : undefined}>
              {active ? '❯ ' : '  '}
              {r.label.padEnd(width)}{' '}
            </Text>
            {active && !isChoice ? (
              <TextInput
                value={v}
                onChange={(nv) => set(r.key, nv)}
                onTab={
                  r.kind === 'extra' || r.kind === 'output'
                    ? () => {
                        const c = completePath(v, cwd);
                        set(r.key, c.value);
                        setCandidates(c.candidates.slice(0, 20));
                      }
                    : undefined
                }
                placeholder={shown ? `${shown} ` : ''}
              />
            ) : (
              <Text dimColor={!v}>{isChoice ? `‹ ${shown || '—'} ›` : shown || '—'}</Text>
            )}
            <Text dimColor wrap="truncate-end">
              {' '}
              {hintFor(r)}
            </Text>
            {problem ? <Text color="red"> ✖ {problem}</Text> : null}
          </Box>
        );
      })}
      {first + 15 < rows.length ? <Text dimColor> ↓ {rows.length - first - 15} more</Text> : null}
      {candidates.length ? <Text dimColor>{candidates.join('  ')}</Text> : null}
      <Text dimColor>↑↓ move · type a value (empty = default) · ←→/Space change a choice · Enter on Run or Ctrl-R run · Esc back</Text>
    </Box>
  );
}

function Running({ name, percent, stage, onCancel }: { name: string; percent: number; stage?: string; onCancel: () => void }) {
  useKeys((_i, key) => {
    if (key.escape) onCancel();
  });
  const p = Math.max(0, Math.min(100, Math.round(percent)));
  const filled = Math.round(p / 5);
  return (
    <Box flexDirection="column">
      <Text>
        Running {name} <Text color="green">{'█'.repeat(filled)}</Text>
        <Text dimColor>{'░'.repeat(20 - filled)}</Text> {p}% {stage ?? ''}
      </Text>
      <Text dimColor>Esc cancel</Text>
    </Box>
  );
}

function Done({
  results,
  fatal,
  cwd,
  onAgain,
  onNew,
  onQuit,
}: {
  results: ItemResult[];
  fatal?: string;
  cwd: string;
  onAgain: () => void;
  onNew: () => void;
  onQuit: () => void;
}) {
  useKeys((input, key) => {
    if (input === 'q' || key.escape) onQuit();
    else if (key.return || input === 'n') onNew();
    else if (input === 'a') onAgain();
  });
  return (
    <Box flexDirection="column">
      {fatal ? <Text color="red">✖ {fatal}</Text> : null}
      {results.map((r, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: results are only ever appended, so an index is a stable key
        <Box key={i} flexDirection="column">
          {r.ok ? (
            <Text color="green">
              ✔ {r.input ? `${path.relative(cwd, r.input) || r.input} → ` : ''}
              {r.output ? path.relative(cwd, r.output) || r.output : 'done'}
              {r.output ? <Text dimColor> ({r.output})</Text> : null}
            </Text>
          ) : (
            <Text color="red">
              ✖ {r.input ? `${path.relative(cwd, r.input) || r.input}: ` : ''}
              {r.error!.message} ({r.error!.code})
            </Text>
          )}
          {r.data ? <Text dimColor>{JSON.stringify(r.data).slice(0, 300)}</Text> : null}
        </Box>
      ))}
      <Text dimColor>Enter new run · a same tool again · q quit</Text>
    </Box>
  );
}
