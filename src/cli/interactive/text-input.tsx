/** A one-line text input for ink: typing, backspace, Ctrl-U, and hooks for Enter and Tab. */
import { Text, useInput } from 'ink';
import { useRef } from 'react';
import { useLatest } from './use-latest.js';

export interface TextInputProps {
  value: string;
  onChange: (v: string) => void;
  onSubmit?: (v: string) => void;
  onTab?: () => void;
  placeholder?: string;
  focus?: boolean;
}

export function TextInput({ value, onChange, onSubmit, onTab, placeholder, focus = true }: TextInputProps) {
  const props = useLatest({ onChange, onSubmit, onTab });
  // Several keys can arrive before the next render: each edits the text left by the previous one.
  const text = useRef(value);
  text.current = value;
  useInput(
    (input, key) => {
      const p = props.current;
      const change = (v: string) => {
        text.current = v;
        p.onChange(v);
      };
      if (key.return) return p.onSubmit?.(text.current);
      if (key.tab) return p.onTab?.();
      if (key.backspace || key.delete) return change(text.current.slice(0, -1));
      if (key.ctrl && input === 'u') return change('');
      if (key.upArrow || key.downArrow || key.leftArrow || key.rightArrow || key.escape || key.ctrl || key.meta) return;
      if (input) change(text.current + input.replace(/[\r\n\t]/g, ''));
    },
    { isActive: focus },
  );
  if (!value && placeholder)
    return (
      <Text dimColor>
        {placeholder}
        {focus ? '▏' : ''}
      </Text>
    );
  return (
    <Text>
      {value}
      {focus ? <Text inverse> </Text> : null}
    </Text>
  );
}
