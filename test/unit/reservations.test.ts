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
