import { describe, expect, it } from 'vitest';
import { errorFromAnswer } from './api.js';
import { multipartSnippet, snippet } from './snippets.js';

describe('copy as code for the routes the SDKs have no method for', () => {
  const body = { model: 'zlm-v1-iab-classify-edge', state: "it's", questions: { q1: { type: 'noul', criteria: { true: 'yes' } } } };

  it('curl posts the exact JSON', () => {
    expect(snippet('curl', 'http://h', '/systemone', body)).toBe(
      `curl http://h/v1/systemone \\\n  -H "Authorization: Bearer $SLUICE_API_KEY" \\\n  -H 'content-type: application/json' \\\n  -d '${JSON.stringify(body, null, 2).replace("'", `'\\''`)}'`,
    );
  });

  it("openai-node uses the SDK's generic client.post with the body", () => {
    const code = snippet('node', 'http://h', '/systemone', body);
    expect(code).toContain("const client = new OpenAI({ baseURL: 'http://h/v1', apiKey: process.env.SLUICE_API_KEY });");
    expect(code).toContain(`const result = await client.post('/systemone', { body: ${JSON.stringify(body, null, 2)} });`);
  });

  it('Python uses client.post with a raw response read as JSON', () => {
    const code = snippet('python', 'http://h', '/systemone', body);
    expect(code).toContain('import httpx\n');
    expect(code).toContain('response = client.post("/systemone", cast_to=httpx.Response, body={\n    "model": "zlm-v1-iab-classify-edge",');
    expect(code).toContain('"criteria": {\n                "true": "yes"\n            }');
    expect(code.endsWith('result = response.json()\n')).toBe(true);
  });
});

describe('copy as code for an audio upload', () => {
  const fields = [
    ['model', 'whisper-tiny'],
    ['response_format', 'verbose_json'],
    ['timestamp_granularities[]', 'segment'],
    ['prompt', "Ada's notes"],
  ] as const;

  it('curl sends the file and every field as form parts, shell-quoted', () => {
    expect(multipartSnippet('curl', 'http://h', '/audio/transcriptions', fields, 'clip.wav')).toBe(
      [
        'curl http://h/v1/audio/transcriptions',
        '  -H "Authorization: Bearer $SLUICE_API_KEY"',
        "  -F 'file=@clip.wav'",
        "  -F 'model=whisper-tiny'",
        "  -F 'response_format=verbose_json'",
        "  -F 'timestamp_granularities[]=segment'",
        "  -F 'prompt=Ada'\\''s notes'",
      ].join(' \\\n'),
    );
  });

  it('the SDKs pass the file and the fields, the [] field as a list', () => {
    expect(multipartSnippet('node', 'http://h', '/audio/transcriptions', fields, 'clip.wav')).toContain(
      'const result = await client.audio.transcriptions.create({\n  file: fs.createReadStream("clip.wav"),\n  model: "whisper-tiny",\n  response_format: "verbose_json",\n  timestamp_granularities: ["segment"],\n  prompt: "Ada\'s notes",\n});',
    );
    expect(multipartSnippet('python', 'http://h', '/audio/transcriptions', fields, 'clip.wav')).toContain(
      'result = client.audio.transcriptions.create(\n    file=open("clip.wav", "rb"),\n    model="whisper-tiny",\n    response_format="verbose_json",\n    timestamp_granularities=[\n        "segment"\n    ],\n    prompt="Ada\'s notes",\n)',
    );
  });
});

describe("the decision route's FastAPI errors", () => {
  it('reads every listed failure with its place, and the first type as the code', () => {
    const detail = [
      { type: 'too_short', loc: ['body', 'questions'], msg: 'Dictionary should have at least 1 item after validation, not 0', input: {} },
      { type: 'missing', loc: ['body', 'questions', 'q1', 'criteria'], msg: 'Field required' },
    ];
    const error = errorFromAnswer(422, 'req_9', JSON.stringify({ detail }));
    expect({ message: error.message, code: error.code, requestId: error.requestId }).toEqual({
      message: 'questions: Dictionary should have at least 1 item after validation, not 0; questions.q1.criteria: Field required',
      code: 'too_short',
      requestId: 'req_9',
    });
    expect(errorFromAnswer(422, null, JSON.stringify({ detail: [{ type: 'json_invalid', loc: ['body', 10], msg: 'JSON decode error' }] })).message).toBe('10: JSON decode error');
    expect(errorFromAnswer(400, null, JSON.stringify({ detail: 'Too many choices' })).message).toBe('Too many choices');
  });
});
