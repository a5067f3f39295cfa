import { useInput, type Key } from 'ink';
import { useRef } from 'react';

/**
 * The latest props/state for input handlers. ink registers useInput handlers in an effect, so a key
 * that arrives before the effect re-runs would otherwise see the previous render's values.
 */
export function useLatest<T>(value: T): { readonly current: T } {
  const ref = useRef(value);
  ref.current = value;
  return ref;
}

/** useInput whose handler always sees the latest render. */
export function useKeys(fn: (input: string, key: Key) => void, opts?: { isActive?: boolean }): void {
  const ref = useLatest(fn);
  useInput((input, key) => ref.current(input, key), opts);
}
