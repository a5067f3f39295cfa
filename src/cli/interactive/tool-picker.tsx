/** The first screen of the interactive mode: search the tools and presets, pick one. */
import { Box, Text } from 'ink';
import { useMemo, useState } from 'react';
import { search, type Choice } from './catalog.js';
import { TextInput } from './text-input.js';
import { useKeys } from './use-latest.js';

const PAGE = 10;

export function ToolPicker({ all, onPick, onQuit }: { all: Choice[]; onPick: (c: Choice) => void; onQuit: () => void }) {
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
