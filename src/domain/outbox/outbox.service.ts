/** What an operator does with the outbox: see its messages (those that went dead among them), and send a dead one again. */
import { AppError, notFound } from '../shared/errors.js';
import type { Clock } from '../shared/clock.js';
import type { Page } from '../shared/pagination.js';
import type { OutboxEntry, OutboxFilter, OutboxStore } from './outbox.types.js';

export class OutboxService {
  constructor(
    private readonly store: OutboxStore,
    private readonly clock: Clock,
    /** Called after a replay, so the message goes now rather than at the next poll. */
    private readonly onReplay: () => void = () => {},
  ) {}

  /** Messages of every state (or of the filter's), newest first: the settlements an operator watches. */
  list(filter: OutboxFilter, limit: number, after?: string): Promise<Page<OutboxEntry>> {
    return this.store.list(filter, limit, after);
  }

  /** Dead messages, oldest first. */
  listDead(limit: number, after?: string): Promise<Page<OutboxEntry>> {
    return this.store.listDead(limit, after);
  }

  /** Makes a dead message pending again with no attempts; 404 for no such message, 409 when it is not dead. */
  async replay(id: string): Promise<OutboxEntry> {
    const entry = await this.store.find(id);
    if (!entry) throw notFound(`No outbox message found with id '${id}'.`, 'outbox_message_not_found', 'id');
    if (!(await this.store.replay(id, this.clock.nowMs()))) {
      throw new AppError('conflict', `Outbox message ${id} is ${entry.state}; only a dead message is replayed`, { code: 'outbox_message_not_dead' });
    }
    this.onReplay();
    return (await this.store.find(id))!;
  }
}
