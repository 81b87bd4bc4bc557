/** Small numeric helpers shared by the ONNX tasks. */

export function softmax(values: ArrayLike<number>): number[] {
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) max = Math.max(max, values[i]!);
  const exps = Array.from(values, (v) => Math.exp(v - max));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((e) => e / sum);
}

export const sigmoid = (x: number): number => 1 / (1 + Math.exp(-x));

export function argmax(values: ArrayLike<number>, from = 0, to = values.length): number {
  let best = from;
  for (let i = from + 1; i < to; i++) if (values[i]! > values[best]!) best = i;
  return best;
}
