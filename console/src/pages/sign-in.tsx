/** Sign in with the admin token (operator) or an API key (developer of its project). */
import { useState, type FormEvent } from 'react';
import { post } from '../lib/api.js';
import type { Session } from '../lib/types.js';
import { ErrorBox } from '../components/common.js';

export function SignIn({ onSignedIn }: { onSignedIn: (session: Session) => void }) {
  const [credential, setCredential] = useState('');
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await post<Session>('/session', { credential }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <main className="sign-in">
      <h1>Sluice console</h1>
      <form onSubmit={(e) => void submit(e)}>
        <label htmlFor="credential">Admin token or API key</label>
        <input
          id="credential"
          type="password"
          autoComplete="current-password"
          required
          value={credential}
          onChange={(e) => setCredential(e.target.value)}
        />
        <p className="hint">
          Operators sign in with <code>SLUICE_ADMIN_TOKEN</code> and see every project; developers sign in with an API key
          (<code>sk-sluice-…</code>) and see what that key can see.
        </p>
        <ErrorBox error={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
