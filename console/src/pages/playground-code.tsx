/** "This request as code": the exact body as curl, openai-node or Python, with a copy button. */
import { useState } from 'react';
import { snippet, type SnippetKind } from '../lib/snippets.js';
import { CopyButton } from '../components/common.js';

export function CodeBox({ route, body }: { route: string; body: Record<string, unknown> }) {
  const [kind, setKind] = useState<SnippetKind>('curl');
  const code = snippet(kind, window.location.origin, route, body);
  return (
    <section aria-label="This request as code">
      <h2>This request as code</h2>
      <div className="actions" role="group" aria-label="Language">
        {(['curl', 'node', 'python'] as const).map((k) => (
          <button key={k} type="button" className={k === kind ? '' : 'secondary'} aria-pressed={k === kind} onClick={() => setKind(k)}>
            {k === 'node' ? 'openai-node' : k === 'python' ? 'Python' : 'curl'}
          </button>
        ))}
        <CopyButton text={code} label="Copy code" />
      </div>
      <pre className="code">{code}</pre>
    </section>
  );
}
