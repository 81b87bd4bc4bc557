/** "This request as code": the exact body (or multipart form) as curl, openai-node or Python, with a copy button. */
import { useState } from 'react';
import { multipartSnippet, snippet, type SnippetKind } from '../lib/snippets.js';
import { CopyButton } from '../components/common.js';

export interface MultipartRequest {
  fields: ReadonlyArray<readonly [string, string]>;
  fileName: string;
}

type CodeBoxProps = { route: string; body: Record<string, unknown>; form?: undefined } | { route: string; form: MultipartRequest; body?: undefined };

export function CodeBox(props: CodeBoxProps) {
  const [kind, setKind] = useState<SnippetKind>('curl');
  const origin = window.location.origin;
  const code = props.form ? multipartSnippet(kind, origin, props.route, props.form.fields, props.form.fileName) : snippet(kind, origin, props.route, props.body);
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
