/**
 * How a burst of calls arrives: all at once, in waves of 10, or one every 3 ms. Each
 * takes `send` (one call) and resolves with every answer, in the order the calls were sent.
 */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export type Arrival<T> = (send: () => Promise<T>, calls: number) => Promise<T[]>;

export function arrivals<T>(): Array<[name: string, arrive: Arrival<T>]> {
  return [
    ['all at once', (send, calls) => Promise.all(Array.from({ length: calls }, send))],
    [
      '10 at a time',
      async (send, calls) => {
        const answers: T[] = [];
        for (let sent = 0; sent < calls; sent += 10) answers.push(...(await Promise.all(Array.from({ length: Math.min(10, calls - sent) }, send))));
        return answers;
      },
    ],
    ['one every 3 ms', (send, calls) => Promise.all(Array.from({ length: calls }, (_, i) => sleep(3 * i).then(send)))],
  ];
}
