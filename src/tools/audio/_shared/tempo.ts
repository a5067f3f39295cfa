/** atempo accepts 0.5-2 per instance (wider ranges lose quality): chain instances for 0.25-4. */
export function atempoChain(factor: number): string {
  const parts: string[] = [];
  let f = factor;
  while (f > 2) {
    parts.push('atempo=2');
    f /= 2;
  }
  while (f < 0.5) {
    parts.push('atempo=0.5');
    f /= 0.5;
  }
  parts.push(`atempo=${f.toFixed(6)}`);
  return parts.join(',');
}
