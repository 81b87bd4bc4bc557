/** "Rotate": a native modal dialog that issues a key a new secret, the old one working for the grace period chosen. */
import { useId, useRef, useState, type FormEvent } from 'react';
import { post } from '../lib/api.js';
import type { ApiKey } from '../lib/types.js';
import { ErrorBox } from './common.js';

const GRACE_CHOICES: ReadonlyArray<[number, string]> = [
  [0, 'none: the old secret stops now'],
  [300, '5 minutes'],
  [3600, '1 hour'],
  [86_400, '1 day'],
  [604_800, '7 days'],
];

export function RotateKeyButton({ apiKey, onRotated }: { apiKey: ApiKey; onRotated(rotated: ApiKey & { key: string }): void }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const id = useId();
  const [grace, setGrace] = useState('3600');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);

  const rotate = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const rotated = await post<ApiKey & { key: string }>(`/admin/keys/${apiKey.id}/rotate`, { grace_seconds: Number(grace) });
      dialog.current?.close();
      onRotated(rotated);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <button type="button" className="secondary" onClick={() => dialog.current?.showModal()}>
        Rotate {apiKey.name}
      </button>
      <dialog ref={dialog} aria-labelledby={`${id}-title`}>
        <h2 id={`${id}-title`}>Rotate “{apiKey.name}”?</h2>
        <p>A new secret is issued and shown once. The old one keeps working for the grace period, so callers can switch without downtime.</p>
        <form onSubmit={(e) => void rotate(e)}>
          <label htmlFor={`${id}-grace`}>Grace period for the old secret</label>
          <select id={`${id}-grace`} value={grace} onChange={(e) => setGrace(e.target.value)}>
            {GRACE_CHOICES.map(([seconds, label]) => (
              <option key={seconds} value={String(seconds)}>
                {label}
              </option>
            ))}
          </select>
          <ErrorBox error={error} />
          <div className="actions">
            <button type="button" className="secondary" onClick={() => dialog.current?.close()}>
              Cancel
            </button>
            <button type="submit" disabled={busy}>
              Rotate key
            </button>
          </div>
        </form>
      </dialog>
    </>
  );
}
