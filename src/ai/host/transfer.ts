import { canMove } from '../../core/transfer.js';

/**
 * The buffers of typed arrays in a message (top level and one level down), moved instead of copied:
 * each one a view covers whole, and that node lets go (canMove).
 */
export function transferables(value: unknown): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  const add = (v: unknown) => {
    if (ArrayBuffer.isView(v) && v.byteLength === v.buffer.byteLength && canMove(v.buffer)) out.add(v.buffer);
  };
  if (value && typeof value === 'object') {
    for (const v of Object.values(value)) {
      add(v);
      if (Array.isArray(v)) v.forEach(add);
      else if (v && typeof v === 'object') Object.values(v).forEach(add);
    }
  }
  return [...out];
}
