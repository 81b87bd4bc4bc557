/** A button that asks before acting, in a native modal dialog (focus and Escape handled by the browser). */
import { useId, useRef, useState, type ReactNode } from 'react';
import { ErrorBox } from './common.js';

export function ConfirmButton(props: { label: ReactNode; title: string; message: string; confirmLabel: string; onConfirm: () => Promise<unknown>; danger?: boolean }) {
  const dialog = useRef<HTMLDialogElement>(null);
  // Unique per button: a table of rows each with this button repeats the same title.
  const titleId = useId();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const confirm = async () => {
    setBusy(true);
    setError(null);
    try {
      await props.onConfirm();
      dialog.current?.close();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <>
      <button type="button" className={props.danger ? 'danger' : 'secondary'} onClick={() => dialog.current?.showModal()}>
        {props.label}
      </button>
      <dialog ref={dialog} aria-labelledby={titleId}>
        <h2 id={titleId}>{props.title}</h2>
        <p>{props.message}</p>
        <ErrorBox error={error} />
        <div className="actions">
          <button type="button" className="secondary" onClick={() => dialog.current?.close()}>
            Keep it
          </button>
          <button type="button" className={props.danger ? 'danger' : ''} disabled={busy} onClick={() => void confirm()}>
            {props.confirmLabel}
          </button>
        </div>
      </dialog>
    </>
  );
}
