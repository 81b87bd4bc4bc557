/**
 * The console's classification, transcription and decision playgrounds in headless
 * Chromium against a real Sluice running the random-weight test models in process (the
 * MiniLM-shaped backbone under the zlm-* packs, a tiny Whisper): a taxonomy tree with
 * scores equal to the API's, a transcript with segment timestamps (of a file, and of a
 * clip recorded from Chromium's fake microphone), answers as
 * probability bars equal to the API's with the exact request and response JSON, each
 * request as code, the API's message and request id on a failure (the decision route's
 * FastAPI 422 included), the empty states of a server with no such model, and axe-core
 * at 1280 and 390 px. Screenshots go to test-output/console/. Skipped, with a message,
 * where no Chromium binary exists.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page } from 'playwright-core';
import { call, startTestServer, type TestServer } from '../../helpers/harness.js';
import { CHROMIUM_PATH, expectAccessible, launchChromium, openPage, signInToConsole } from '../../helpers/browser.js';
import { buildTestModels } from '../../fixtures/model-builders/index.js';
import { audioDir, makeAudio } from '../../fixtures/audio/generate.js';

if (!CHROMIUM_PATH) console.warn('console playground browser tests skipped: no Chromium binary (install Debian\'s chromium, or set CHROMIUM_PATH)');

/** First use assembles a pack (embedding every IAB label) or loads Whisper: longer than a click. */
const MODEL_WAIT = { timeout: 90_000 };

describe.skipIf(!CHROMIUM_PATH)('the console playgrounds in Chromium', () => {
  let server: TestServer;
  let bare: TestServer;
  let browser: Browser;
  let key = '';
  const dirs: string[] = [];

  beforeAll(async () => {
    const modelsDir = buildTestModels(['all-minilm-l6-v2', 'whisper-tiny']);
    const emptyDir = mkdtempSync(path.join(tmpdir(), 'sluice-no-models-'));
    dirs.push(modelsDir, emptyDir);
    server = await startTestServer({ env: { MODELS_DIR: modelsDir } });
    bare = await startTestServer({ env: { MODELS_DIR: emptyDir } });
    ({ key } = await server.newTenant({ balanceUsd: 5 }));
    browser = await launchChromium();
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await bare?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  /** A developer signed in with `credential` on the playground page, its CSP violations collected. */
  async function playground(on: TestServer, credential: string, kind: string): Promise<{ page: Page; cspErrors: string[] }> {
    const { page, cspErrors } = await openPage(browser);
    await signInToConsole(page, on.baseUrl, credential);
    await page.goto(`${on.baseUrl}/console/#/playground`);
    await page.getByRole('button', { name: kind, exact: true }).click();
    return { page, cspErrors };
  }

  /** axe-core finds no serious violation at desktop and phone widths (a screenshot of each). */
  async function expectAccessibleAtBothWidths(page: Page, name: string): Promise<void> {
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: 900 });
      await expectAccessible(page, `${name}-${width}`);
    }
    await page.setViewportSize({ width: 1280, height: 900 });
  }

  const codeBox = (page: Page) => page.getByRole('region', { name: 'This request as code' }).locator('pre');

  it('classifies a text with an enriched zlm model and shows the taxonomy tree with the API’s scores', async () => {
    const { page, cspErrors } = await playground(server, key, 'Classification');
    const model = 'zlm-v2-iab-classify-edge-enriched';
    const text = 'Football scores from the weekend league games.';
    await page.getByLabel('Model').selectOption(model);
    await page.getByLabel('Text to classify').fill(text);
    await page.getByRole('button', { name: 'Classify' }).click();
    await page.getByTestId('tree-iab_2_2').waitFor(MODEL_WAIT);

    const direct = await call(server.baseUrl, 'POST', '/v1/chat/completions', { key, body: { model, messages: [{ role: 'user', content: text }] } });
    const result = JSON.parse(direct.body.choices[0].message.content);
    for (const entry of [...result.content.iab_2_2, ...result.audience]) {
      const tiers = Object.keys(entry).filter((k) => /^tier\d_name$/.test(k)).map((k) => entry[k]);
      const bar = page.getByRole('progressbar', { name: `${tiers.join(' > ')} score`, exact: true });
      expect(await bar.first().getAttribute('aria-valuenow'), tiers.join(' > ')).toBe(String(Math.round(entry.score * 100)));
    }
    // A tier-2 entry sits in its tier-1 parent's nested list; its disclosure button closes it.
    const child = result.content.iab_2_2.find((e: Record<string, unknown>) => e.tier2_name && !e.tier3_name);
    const tree = page.getByTestId('tree-iab_2_2');
    const toggle = tree.getByRole('button', { name: child.tier1_name, exact: true });
    expect(await toggle.getAttribute('aria-expanded')).toBe('true');
    const nested = tree.getByRole('list', { name: `Under ${child.tier1_name}`, exact: true });
    const childBar = nested.getByRole('progressbar', { name: `${child.tier1_name} > ${child.tier2_name} score`, exact: true });
    expect(await childBar.isVisible()).toBe(true);
    await toggle.click();
    expect(await toggle.getAttribute('aria-expanded')).toBe('false');
    expect(await childBar.isVisible()).toBe(false);
    await tree.getByRole('button', { name: 'Expand all' }).click();
    expect(await childBar.isVisible()).toBe(true);
    expect(await page.getByText('Keywords:').isVisible()).toBe(true);

    await page.getByRole('button', { name: 'openai-node', exact: true }).click();
    expect(await codeBox(page).textContent()).toContain(`client.chat.completions.create({\n  "model": "${model}"`);
    await expectAccessibleAtBothWidths(page, 'playground-classification');
    expect(cspErrors).toEqual([]);
  }, 180_000);

  it('shows the API’s message and request id when a classification is refused', async () => {
    const { page } = await playground(server, key, 'Classification');
    await page.getByLabel('Model').selectOption('zlm-v1-iab-domain-classifier');
    await page.getByLabel('URL or domain').fill(`https://example.com/${Array.from({ length: 120 }, () => 'news').join('/')}`);
    await page.getByRole('button', { name: 'Classify' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor(MODEL_WAIT);
    expect(await alert.locator('p').first().textContent()).toBe('Input exceeds max_tokens (100) for model: zlm-v1-iab-domain-classifier (the input has 123 tokens)');
    expect(await alert.locator('.request-id code').textContent()).toMatch(/^req_[0-9a-f]{24}$/);
  }, 120_000);

  it('transcribes an uploaded file and shows the segments with their timestamps', async () => {
    const audio = makeAudio(audioDir(), { name: 'tone.wav', seconds: 35, tone: 440 });
    dirs.push(path.dirname(audio));
    const { page, cspErrors } = await playground(server, key, 'Transcription');
    // No microphone in the test browser: recording says so, and a file still works.
    await page.getByRole('button', { name: 'Record from the microphone' }).click();
    expect(await page.getByTestId('microphone-problem').textContent()).toMatch(/choose an audio file instead\.$/);

    await page.getByLabel('Audio file').setInputFiles(audio);
    await page.getByTestId('audio-file').waitFor();
    await page.getByRole('button', { name: 'Transcribe' }).click();
    await page.getByTestId('transcript').waitFor(MODEL_WAIT);

    const form = new FormData();
    form.append('file', new Blob([readFileSync(audio)]), 'tone.wav');
    for (const [name, value] of [['model', 'whisper-tiny'], ['response_format', 'verbose_json'], ['timestamp_granularities[]', 'segment']]) form.append(name!, value!);
    const direct = (await (await fetch(`${server.baseUrl}/v1/audio/transcriptions`, { method: 'POST', headers: { 'x-api-key': key }, body: form })).json()) as {
      segments: Array<{ start: number; end: number }>;
    };
    expect(direct.segments.length).toBeGreaterThan(1);
    const rows = page.getByRole('table', { name: 'Segments' }).locator('tbody tr');
    expect(await rows.count()).toBe(direct.segments.length);
    const clock = (s: number) => `${Math.floor(s / 60)}:${(s % 60).toFixed(2).padStart(5, '0')}`;
    for (const [i, segment] of direct.segments.entries()) {
      expect(await rows.nth(i).locator('time').allTextContents()).toEqual([clock(segment.start), clock(segment.end)]);
    }
    expect(await page.getByText(/Duration 0:35\.00\./).isVisible()).toBe(true);

    expect(await codeBox(page).textContent()).toContain("-F 'file=@tone.wav' \\\n  -F 'model=whisper-tiny' \\\n  -F 'response_format=verbose_json' \\\n  -F 'timestamp_granularities[]=segment'");
    await expectAccessibleAtBothWidths(page, 'playground-transcription');
    expect(cspErrors).toEqual([]);
  }, 180_000);

  it("records from Chromium's fake microphone and transcribes the clip", async () => {
    // A browser of its own: a fake audio device, and the permission prompt answered yes.
    const recording = await chromium.launch({
      executablePath: CHROMIUM_PATH!,
      args: ['--no-sandbox', '--disable-dev-shm-usage', '--use-fake-device-for-media-stream', '--use-fake-ui-for-media-stream'],
    });
    try {
      const context = await recording.newContext({ viewport: { width: 1280, height: 900 } });
      await context.grantPermissions(['microphone']);
      context.setDefaultTimeout(10_000);
      const page = await context.newPage();
      await signInToConsole(page, server.baseUrl, key);
      await page.goto(`${server.baseUrl}/console/#/playground`);
      await page.getByRole('button', { name: 'Transcription', exact: true }).click();
      await page.getByRole('button', { name: 'Record from the microphone' }).click();
      await page.getByRole('button', { name: 'Stop recording' }).waitFor();
      // Let the recorder gather a second or so of the fake device's tone.
      await page.waitForTimeout(1500);
      await page.getByRole('button', { name: 'Stop recording' }).click();
      expect(await page.getByTestId('audio-file').textContent()).toMatch(/^Sending recording\.(webm|ogg|mp4) \(\d+\.\d KB\)$/);
      await page.getByRole('button', { name: 'Transcribe' }).click();
      await page.getByTestId('transcript').waitFor(MODEL_WAIT);
      expect(await page.getByRole('alert').count()).toBe(0);
      expect(await codeBox(page).textContent()).toMatch(/-F 'file=@recording\.(webm|ogg|mp4)'/);
    } finally {
      await recording.close();
    }
  }, 120_000);

  it('builds a decision request of all three kinds and shows the answers as bars with confidence, and the exact JSON', async () => {
    const { page, cspErrors } = await playground(server, key, 'Decision');
    await page.getByLabel('Model').selectOption('zlm-v1-iab-classify-edge');
    await page.getByLabel('State', { exact: true }).fill('The new electric sedan has a longer range and a faster charger.');
    await page.getByRole('button', { name: 'Add choice question' }).click();
    await page.getByLabel('Name of question 2', { exact: true }).fill('topic');
    await page.getByLabel('Option 1 of question 2', { exact: true }).fill('Automotive');
    await page.getByLabel('Option 2 of question 2', { exact: true }).fill('Sports');
    await page.getByRole('button', { name: 'Add an option to question 2' }).click();
    await page.getByLabel('Option 3 of question 2', { exact: true }).fill('cooking');
    await page.getByLabel('Description of option 3 of question 2 (optional)', { exact: true }).fill('recipes and kitchens');
    await page.getByRole('button', { name: 'Add score question' }).click();
    await page.getByLabel('Instructions for question 3', { exact: true }).fill('How positive?');
    for (const [i, level] of ['negative', 'neutral', 'positive'].entries()) await page.getByRole('textbox', { name: new RegExp(`^Level ${i} of question 3`) }).fill(level);
    await page.getByRole('button', { name: 'Decide' }).click();
    await page.getByTestId('decision-answers').waitFor(MODEL_WAIT);

    const body = {
      model: 'zlm-v1-iab-classify-edge',
      state: 'The new electric sedan has a longer range and a faster charger.',
      questions: {
        q1: { type: 'noul', instructions: 'Is this about Automotive?' },
        topic: { type: 'choice', criteria: { Automotive: null, Sports: null, cooking: 'recipes and kitchens' } },
        q3: { type: 'score', instructions: 'How positive?', criteria: ['negative', 'neutral', 'positive'] },
      },
    };
    expect(JSON.parse((await page.getByTestId('decision-request').textContent())!)).toEqual(body);
    const shown = JSON.parse((await page.getByTestId('decision-response').textContent())!);
    const direct = await call(server.baseUrl, 'POST', '/v1/systemone', { key, body });
    expect(shown.answers).toEqual(direct.body.answers);
    const { q1, topic, q3 } = direct.body.answers;
    const bar = (name: string) => page.getByRole('progressbar', { name, exact: true }).getAttribute('aria-valuenow');
    expect(await bar('q1: Yes')).toBe(String(Math.round(q1.noul * 100)));
    expect(await bar('topic: cooking')).toBe(String(Math.round(topic.probabilities.cooking * 100)));
    expect(await bar('q3: 2: positive')).toBe(String(Math.round(q3.probabilities['2'] * 100)));
    const answers = page.getByTestId('decision-answers');
    expect(await answers.getByText(`Confidence ${topic.confidence.toFixed(3)}`).isVisible()).toBe(true);
    expect(await answers.getByText(`Choice: ${topic.choice}`).isVisible()).toBe(true);
    expect(await answers.getByText(`Score ${q3.score.toFixed(2)} of 2`).isVisible()).toBe(true);

    await page.getByRole('button', { name: 'openai-node', exact: true }).click();
    expect(await codeBox(page).textContent()).toContain(`const result = await client.post('/systemone', { body: ${JSON.stringify(body, null, 2)} });`);
    await page.getByRole('button', { name: 'Python', exact: true }).click();
    expect(await codeBox(page).textContent()).toContain('response = client.post("/systemone", cast_to=httpx.Response, body={');
    await expectAccessibleAtBothWidths(page, 'playground-decision');
    expect(cspErrors).toEqual([]);
  }, 180_000);

  it("shows the decision route's FastAPI 422 as its message and request id", async () => {
    const { page } = await playground(server, key, 'Decision');
    await page.getByLabel('Model').selectOption('zlm-v1-iab-domain-classifier');
    await page.getByLabel('State', { exact: true }).fill('not a domain at all');
    await page.getByRole('button', { name: 'Decide' }).click();
    const alert = page.getByRole('alert');
    await alert.waitFor(MODEL_WAIT);
    expect(await alert.locator('p').first().textContent()).toBe('state: Value error, state must be a URL or a domain for zlm-v1-iab-domain-classifier');
    expect(await alert.locator('.request-id code').textContent()).toMatch(/^req_[0-9a-f]{24}$/);
    await expectAccessibleAtBothWidths(page, 'playground-decision-error');
  }, 120_000);

  it('says how to get a model when no zlm, speech or decision model is ready', async () => {
    const { key: bareKey } = await bare.newTenant();
    const { page } = await playground(bare, bareKey, 'Classification');
    await page.getByText('No zlm-* classifier is ready').waitFor();
    expect(await page.getByText('npm run sluice -- models pull zlm-v1-iab-classify-edge').first().isVisible()).toBe(true);
    await expectAccessibleAtBothWidths(page, 'playground-classification-empty');
    await page.getByRole('button', { name: 'Transcription', exact: true }).click();
    await page.getByText('No speech model is ready').waitFor();
    expect(await page.getByText('npm run sluice -- models pull whisper-tiny').isVisible()).toBe(true);
    await page.getByRole('button', { name: 'Decision', exact: true }).click();
    await page.getByText('No decision model is ready').waitFor();
    await expectAccessibleAtBothWidths(page, 'playground-decision-empty');
  });
});
