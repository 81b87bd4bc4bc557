import { describe, expect, it } from 'vitest';
import { getEventListeners } from 'node:events';
import { onAbort } from '../../src/domain/shared/abort.js';

describe('onAbort', () => {
  it('calls every listener still registered, once, with the reason', () => {
    const controller = new AbortController();
    const heard: unknown[] = [];
    const removeFirst = onAbort(controller.signal, (reason) => heard.push(['first', reason]));
    onAbort(controller.signal, (reason) => heard.push(['second', reason]));
    removeFirst();
    const reason = new Error('client closed');
    controller.abort(reason);
    controller.abort(new Error('again'));
    expect(heard).toEqual([['second', reason]]);
  });

  it('calls the listener at once when the signal has already aborted', () => {
    const reason = new Error('gone');
    const heard: unknown[] = [];
    const remove = onAbort(AbortSignal.abort(reason), (r) => heard.push(r));
    expect(heard).toEqual([reason]);
    expect(() => remove()).not.toThrow();
  });

  it('keeps one listener on the signal however many come and go', () => {
    const controller = new AbortController();
    for (let i = 0; i < 1000; i++) onAbort(controller.signal, () => {})();
    expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
    let called = 0;
    onAbort(controller.signal, () => called++);
    controller.abort();
    expect(called).toBe(1);
  });
});
