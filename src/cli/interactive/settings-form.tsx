/** The settings screen: one row per setting, extra file and the output, checked with the tool's own schema before the run. */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Box, Text } from 'ink';
import { useMemo, useState, type Dispatch, type SetStateAction } from 'react';
import { toKilnError, type FieldProblem } from '../../core/errors.js';
import { coerceSettingValue, describeSettings, parseSettings, type SettingInfo } from '../../core/settings.js';
import type { ExtraInput } from '../../core/tool.js';
import type { Choice } from './catalog.js';
import { completePath } from './path-complete.js';
import { TextInput } from './text-input.js';
import { useKeys } from './use-latest.js';

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

export function SettingsForm({
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
