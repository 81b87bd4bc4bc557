/** The in-memory credit holds: fit, release, and reads that straddle a settlement. */
import { describe, expect, it } from 'vitest';
import { ReservationBook } from '../../src/domain/billing/reservations.js';

describe('ReservationBook', () => {
  it('holds only what fits in the balance less the holds, and gives it back once', () => {
    const book = new ReservationBook();
    const a = book.tryHold('p', 10, 6, book.beginRead())!;
    expect(a).not.toBeNull();
    expect(book.tryHold('p', 10, 5, book.beginRead())).toBeNull();
    expect(book.tryHold('q', 10, 5, book.beginRead())).not.toBeNull(); // another project
    a.release();
    a.release();
    expect(book.heldFor('p')).toBe(0);
    expect(book.tryHold('p', 10, 10, book.beginRead())).not.toBeNull();
    expect(book.tryHold('p', 0, 0, book.beginRead())).toBeNull(); // nothing fits in no balance
  });

  it('a read begun before a settlement still counts the settled hold; one begun after does not', () => {
    const book = new ReservationBook();
    const first = book.beginRead();
    const hold = book.tryHold('p', 10, 8, first)!;
    const stale = book.beginRead(); // its balance (10) may predate the debit of 8
    hold.settled();
    // The stale read sees 10 and no hold: the released 8 is still counted for it.
    expect(book.tryHold('p', 10, 3, stale)).toBeNull();
    book.endRead(first);
    book.endRead(stale);
    const fresh = book.beginRead(); // sees the debit: balance 2
    expect(book.tryHold('p', 2, 2, fresh)).not.toBeNull();
    book.endRead(fresh);
  });

  it('forgets released holds once no read begun before them is under way', () => {
    const book = new ReservationBook();
    const read = book.beginRead();
    const hold = book.tryHold('p', 10, 10, read)!;
    hold.settled();
    book.endRead(read);
    // With no read under way, a read that began before the settlement cannot exist any more.
    expect(book.tryHold('p', 10, 10, book.beginRead())).not.toBeNull();
  });
});

describe('ReservationBook: waiting for holds to be given back', () => {
  const pending = Symbol('pending');
  /** Whether `promise` has settled once the queued callbacks have run (no clock involved). */
  async function stateOf(promise: Promise<void>): Promise<'resolved' | 'rejected' | typeof pending> {
    let state: 'resolved' | 'rejected' | typeof pending = pending;
    promise.then(
      () => (state = 'resolved'),
      () => (state = 'rejected'),
    );
    await new Promise((resolve) => setImmediate(resolve));
    return state;
  }

  it("wakes a project's waiters when one of its holds is released or settled, and no other project's", async () => {
    const book = new ReservationBook();
    const a = book.tryHold('p', 10, 6, book.beginRead())!;
    const b = book.tryHold('p', 10, 4, book.beginRead())!;
    const other = book.tryHold('q', 10, 5, book.beginRead())!;
    const first = book.whenReleased('p', book.releasesOf('p'), 60_000);
    const second = book.whenReleased('p', book.releasesOf('p'), 60_000);
    other.release();
    expect(await stateOf(first)).toBe(pending);
    a.settled();
    expect(await stateOf(first)).toBe('resolved');
    expect(await stateOf(second)).toBe('resolved');
    // A waiter that registers after the wake still waits for the next one.
    const third = book.whenReleased('p', book.releasesOf('p'), 60_000);
    expect(await stateOf(third)).toBe(pending);
    b.release();
    expect(await stateOf(third)).toBe('resolved');
  });

  it('returns at once when a hold was given back since the count it was passed, or when nothing is held', async () => {
    const book = new ReservationBook();
    const a = book.tryHold('p', 10, 3, book.beginRead())!;
    book.tryHold('p', 10, 3, book.beginRead());
    const seen = book.releasesOf('p');
    a.release(); // between the refusal and the wait: must not be missed
    expect(await stateOf(book.whenReleased('p', seen, 60_000))).toBe('resolved');
    expect(await stateOf(book.whenReleased('idle', book.releasesOf('idle'), 60_000))).toBe('resolved');
  });

  it('gives up after its timeout, and rejects when its signal aborts', async () => {
    const book = new ReservationBook();
    book.tryHold('p', 10, 3, book.beginRead());
    await expect(book.whenReleased('p', book.releasesOf('p'), 5)).resolves.toBeUndefined();
    const controller = new AbortController();
    const waiting = book.whenReleased('p', book.releasesOf('p'), 60_000, controller.signal);
    controller.abort(new Error('draining'));
    await expect(waiting).rejects.toThrow('draining');
  });

  it('freeOf is the balance less the holds in flight and those given back since the read began', () => {
    const book = new ReservationBook();
    const read = book.beginRead();
    const hold = book.tryHold('p', 10, 4, read)!;
    expect(book.freeOf('p', 10, read)).toBe(6);
    hold.settled(); // the read may predate the debit: it still counts the 4
    expect(book.freeOf('p', 10, read)).toBe(6);
    book.endRead(read);
    expect(book.freeOf('p', 6, book.beginRead())).toBe(6);
  });
});

describe('ReservationBook: waiters that give up', () => {
  it('forgets a waiter that timed out or was aborted: a later release wakes only those still waiting', async () => {
    const book = new ReservationBook();
    const hold = book.tryHold('p', 10, 3, book.beginRead())!;
    await book.whenReleased('p', book.releasesOf('p'), 1);
    const controller = new AbortController();
    const aborted = book.whenReleased('p', book.releasesOf('p'), 60_000, controller.signal);
    controller.abort(new Error('stop'));
    await expect(aborted).rejects.toThrow('stop');
    let woken = 0;
    const waiting = book.whenReleased('p', book.releasesOf('p'), 60_000).then(() => woken++);
    hold.release();
    await waiting;
    expect(woken).toBe(1);
    // Nothing is left registered: a new hold's waiter waits for its own release.
    const next = book.tryHold('p', 10, 3, book.beginRead())!;
    let settled = false;
    const later = book.whenReleased('p', book.releasesOf('p'), 60_000).then(() => (settled = true));
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    next.settled();
    await later;
    expect(settled).toBe(true);
  });
});
