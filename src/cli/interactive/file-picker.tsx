/** The input screen: type or Tab-complete paths (a glob adds every match), Enter adds, Enter on empty goes on to the settings. */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { Box, Text } from 'ink';
import { useState, type Dispatch, type SetStateAction } from 'react';
import { toKilnError } from '../../core/errors.js';
import { expandInputs } from '../local-runner.js';
import type { Choice } from './catalog.js';
import { completePath } from './path-complete.js';
import { TextInput } from './text-input.js';
import { useKeys } from './use-latest.js';

export function FilePicker({
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
