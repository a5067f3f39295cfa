/** The smallest frame of the target ratio ('16:9') that holds the source whole; even sides. */
export function padSize(src: { width: number; height: number }, target: string): { width: number; height: number } {
  const [a, b] = target.split(':').map(Number) as [number, number];
  const up = (n: number) => Math.ceil(n / 2) * 2;
  if (src.width / src.height < a / b) return { width: up((src.height * a) / b), height: src.height };
  return { width: src.width, height: up((src.width * b) / a) };
}
