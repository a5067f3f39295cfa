/** The cancellation check of the image tools' loops: the project's one cancellation error, CANCELLED. */
import { KilnError } from '../../../core/errors.js';

export function checkAbort(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new KilnError('CANCELLED', 'The run was cancelled.');
}
