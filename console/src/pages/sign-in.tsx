/**
 * Sign in with the identity provider (when one is configured), the admin token (operator)
 * or an API key (developer of its project). A refused sign-in through the provider comes
 * back here with `?sign_in_error=<code>`, shown as a message.
 */
import { useState, type FormEvent } from 'react';
import { get, post } from '../lib/api.js';
import type { Session, SignInOptions } from '../lib/types.js';
import { useApi } from '../lib/use-api.js';
import { ErrorBox } from '../components/common.js';

const REFUSALS: Record<string, string> = {
  sign_in_not_mapped: 'Your account has no role in Sluice: ask an operator to give you one.',
  sign_in_token_invalid: 'The identity provider\'s answer failed verification. Try again; if it keeps failing, tell an operator.',
  sign_in_token_expired: 'The sign-in took too long and its token expired. Try again.',
  sign_in_state_mismatch: 'This sign-in did not match the one started here. Try again.',
  sign_in_flow_invalid: 'This sign-in has expired or was already used. Try again.',
  sign_in_code_rejected: 'The identity provider refused this sign-in (already used or expired). Try again.',
  sign_in_denied: 'The identity provider did not sign you in.',
  sign_in_no_email: 'The identity provider sent no email address for your account.',
  sign_in_email_taken: 'Another user has your email address: ask an operator to link your account.',
  sign_in_provider_unreachable: 'The identity provider could not be reached. Try again later.',
  sign_in_rate_limited: 'Too many sign-in attempts from this address. Try again in a minute.',
};

function refusalFromAddress(): string | null {
  const code = new URLSearchParams(window.location.search).get('sign_in_error');
  if (code === null) return null;
  return REFUSALS[code] ?? 'Signing in through the identity provider failed. Try again.';
}

function ProviderSignIn() {
  const { data } = useApi((signal) => get<SignInOptions>('/session/options', signal), []);
  const [refusal] = useState(refusalFromAddress);
  if (!data?.oidc) return null;
  return (
    <section className="provider-sign-in" aria-label="Single sign-on">
      {refusal && (
        <p className="error" role="alert">
          {refusal}
        </p>
      )}
      <a className="button" href={data.oidc.start_url}>
        Sign in with {data.oidc.provider_name}
      </a>
      <p className="hint">Or, without an account there:</p>
    </section>
  );
}

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
      <ProviderSignIn />
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
