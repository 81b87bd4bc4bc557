/** Small shared pieces: loading, empty and error states, progress bars, status chips, copy buttons. */
import { useState, type ReactNode } from 'react';
import { ApiError } from '../lib/api.js';

export function Loading({ what }: { what: string }) {
  return (
    <p className="loading" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <p className="empty-title">{title}</p>
      {children}
    </div>
  );
}

/** The API's own message, and its request id for the server log. */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  const requestId = error instanceof ApiError ? error.requestId : null;
  const param = error instanceof ApiError ? error.param : null;
  return (
    <div className="error" role="alert">
      <p>{message}</p>
      {param && (
        <p className="error-field">
          Field: <code>{param}</code>
        </p>
      )}
      {requestId && (
        <p className="request-id">
          Request id: <code>{requestId}</code>
        </p>
      )}
    </div>
  );
}

export function ProgressBar({ value, label }: { value: number; label: string }) {
  return (
    <div className="progress" role="progressbar" aria-label={label} aria-valuemin={0} aria-valuemax={100} aria-valuenow={Math.round(value)}>
      <div className="progress-fill" style={{ width: `${Math.max(0, Math.min(100, value))}%` }} />
    </div>
  );
}

export function StatusChip({ status, tone }: { status: string; tone: string }) {
  return <span className={`chip chip-${tone}`}>{status}</span>;
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(text);
    setCopied(true);
    setTimeout(() => setCopied(false), 1500);
  };
  return (
    <button type="button" className="secondary" onClick={() => void copy()}>
      {copied ? 'Copied' : label}
    </button>
  );
}

/** A table that may scroll sideways on a narrow screen: focusable, so the keyboard can scroll it too. */
export function TableWrap({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={label}>
      {children}
    </div>
  );
}
