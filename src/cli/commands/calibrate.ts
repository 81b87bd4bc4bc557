/**
 * `sluice calibrate <model> <labelled.jsonl>`: fits the decision route's calibrators of a
 * decision model from labelled answers, one JSON object a line:
 * `{"state": …, "question": {<a decision question>}, "answer": …}` where the answer is
 * true/false (or "yes"/"no") for a noul, the right choice name for a choice, the right
 * level index for a score. Questions are answered in process by the same code as
 * `POST /v1/systemone` (uncalibrated, not billed), with a progress bar on a terminal;
 * then one calibrator per question type present is fitted by log loss, accuracy, Brier
 * and ECE before and after are printed, reliability diagrams are written under the
 * model's `reports/`, and `decision-calibration.json` is replaced atomically (types
 * absent from the file keep their calibrator).
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { Command } from 'commander';
import cliProgress from 'cli-progress';
import { fitReport, type LabelledAnswer } from '../../domain/decision/calibration-fit.js';
import { readDecisionRequest, type DecisionQuestion, type FreeText, type QuestionType } from '../../domain/decision/validation.js';
import { AppError } from '../../domain/shared/errors.js';
import { atomicWrite } from '../../inference/classifier/heads.js';
import { reliabilitySvg } from '../../inference/classifier/reliability-svg.js';
import { DECISION_CALIBRATION_FILE } from '../../inference/decision/pack-decision-scorer.js';
import { printJson, withAssembly } from '../context.js';

interface LabelledDecision {
  line: number;
  state: FreeText;
  question: DecisionQuestion;
  truth: number;
}

const bad = (file: string, line: number, message: string) => new AppError('invalid_request', `${file} line ${line}: ${message}`);

function truthOf(question: DecisionQuestion, answer: unknown): number | null {
  if (question.type === 'noul') {
    if (answer === true || answer === 'yes') return 1;
    if (answer === false || answer === 'no') return 0;
    return null;
  }
  if (question.type === 'choice') {
    const index = question.criteria.findIndex((c) => c.name === answer);
    return index === -1 ? null : index;
  }
  return Number.isInteger(answer) && (answer as number) >= 0 && (answer as number) < question.criteria.length ? (answer as number) : null;
}

export function parseLabelledDecisions(text: string, file: string, model: string): LabelledDecision[] {
  const records: LabelledDecision[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = i + 1;
    if (raw.trim() === '') return;
    let value: { state?: unknown; question?: unknown; answer?: unknown };
    try {
      value = JSON.parse(raw);
    } catch {
      throw bad(file, line, 'not valid JSON');
    }
    let request;
    try {
      request = readDecisionRequest({ model, state: value?.state, questions: { q: value?.question } });
    } catch (err) {
      const detail = (err as AppError).challenge?.body as { detail: Array<{ loc: unknown[]; msg: string }> } | undefined;
      const first = detail?.detail[0];
      throw bad(file, line, first ? `${first.loc.slice(1).join('.').replace('questions.q', 'question')}: ${first.msg}` : String(err));
    }
    const question = request.questions.get('q')!;
    const truth = truthOf(question, value.answer);
    if (truth === null) {
      const want = { noul: 'true or false', choice: 'one of the choice names', score: 'a level index' }[question.type];
      throw bad(file, line, `answer must be ${want} for a ${question.type} question, got ${JSON.stringify(value.answer)}`);
    }
    records.push({ line, state: request.state, question, truth });
  });
  if (records.length === 0) throw new AppError('invalid_request', `${file} has no labelled answers`);
  return records;
}

function progress(total: number): { tick: () => void; stop: () => void } {
  if (!process.stderr.isTTY) return { tick: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar({ stream: process.stderr, format: 'answering {bar} {value}/{total}', hideCursor: true }, cliProgress.Presets.shades_classic);
  bar.start(total, 0);
  return { tick: () => bar.increment(1), stop: () => bar.stop() };
}

const f = (x: number) => x.toFixed(4);

async function calibrate(modelName: string, file: string, options: { json?: boolean }): Promise<void> {
  const text = await readFile(file, 'utf8').catch(() => {
    throw new AppError('invalid_request', `cannot read ${file}`);
  });
  await withAssembly(async ({ features }) => {
    const decision = features.decision.services;
    const model = await decision.resolveModel(modelName);
    const records = parseLabelledDecisions(text, path.basename(file), model.id);
    const samples = new Map<QuestionType, LabelledAnswer[]>();
    const bar = progress(records.length);
    try {
      for (const record of records) {
        const probs = await decision.uncalibrated(model, record.state, record.question);
        const list = samples.get(record.question.type) ?? [];
        list.push({ probs, truth: record.truth });
        samples.set(record.question.type, list);
        bar.tick();
      }
    } finally {
      bar.stop();
    }
    const reports = [...samples].map(([type, list]) => fitReport(type, list));
    const dir = model.binding.path!;
    const target = path.join(dir, DECISION_CALIBRATION_FILE);
    const existing = (await readFile(target, 'utf8').then(JSON.parse, () => ({}))) as Record<string, unknown>;
    for (const r of reports) existing[r.type] = r.calibrator;
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    for (const r of reports) {
      await atomicWrite(path.join(dir, 'reports', `decision-calibration-${stamp}-${r.type}.svg`), reliabilitySvg(`${model.id} · ${r.type}`, r.before, r.after));
    }
    await atomicWrite(target, `${JSON.stringify(existing, null, 2)}\n`);
    if (options.json) {
      return printJson({ model: model.id, types: reports.map((r) => ({ ...r, before: { ...r.before, bins: undefined }, after: { ...r.after, bins: undefined } })) });
    }
    for (const r of reports) {
      console.log(`${r.type}: temperature ${f(r.calibrator.temperature)}  bias ${f(r.calibrator.bias)}  (${r.before.pairs} answers)`);
      for (const [name, m] of [['before', r.before], ['after ', r.after]] as const) {
        console.log(`  ${name}: accuracy ${f(m.accuracy)}  brier ${f(m.brier)}  ece(15 bins) ${f(m.ece)}`);
      }
    }
    console.log(`calibrators written to ${model.id}/${DECISION_CALIBRATION_FILE} (reliability diagrams: ${model.id}/reports/decision-calibration-${stamp}-<type>.svg)`);
  });
}

export function registerCalibrateCommand(program: Command): void {
  program
    .command('calibrate')
    .description('fit the decision route calibrators of a decision model from labelled answers (JSON Lines: state, question, answer)')
    .argument('<model>', 'a decision model (or an alias such as jev-latest)')
    .argument('<file>', 'labelled JSON Lines')
    .option('--json', 'print the report as JSON')
    .action(calibrate);
}
