/**
 * Which ArrayBuffers a message may move to another thread instead of copying them. Node marks some
 * untransferable: the memory behind a Buffer that a native addon made (sharp's raw pixels, a model
 * runtime's tensors) and its own Buffer pool. Node 20 copied such a buffer when a transfer list named
 * it; since node 21 the post throws DataCloneError ("Cannot transfer object of unsupported type"), and
 * every AI tool failed on node 22 and 24. Left out of the list, they are copied on every version.
 */
import * as threads from 'node:worker_threads';

// Node ≥ 21 only; on node 20 nothing needs telling apart (such a buffer was copied anyway).
const marked = (threads as unknown as { isMarkedAsUntransferable?: (o: unknown) => boolean }).isMarkedAsUntransferable;

/** `buffer` can go in a transfer list: an ArrayBuffer (not shared) that node has not marked untransferable. */
export function canMove(buffer: ArrayBufferLike): buffer is ArrayBuffer {
  return buffer instanceof ArrayBuffer && !marked?.(buffer);
}
