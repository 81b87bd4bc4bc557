/**
 * A classifier pack's manifest, `MODELS_DIR/<id>/pack.json`: which kind of output it
 * gives, its encoder backbone (an embedding model id, or a directory), the label sets it
 * scores, output settings, calibration and thresholds, and its trained heads. Validated
 * at load; an error names the file and the key.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { LABEL_SET_NAMES, MODERATION_LABELS, type LabelSetName } from '../../domain/shared/classification/label-sets.js';
import { jsonErrorPlace, placeAndReason } from '../../domain/shared/json-position.js';

export const MANIFEST_FILE = 'pack.json';
export const PACK_FORMAT = 1;

export const PACK_KINDS = ['iab-edge', 'iab-enriched', 'iab-multi', 'iab-domain', 'moderation'] as const;
export type PackKind = (typeof PACK_KINDS)[number];

const Calibration = Type.Object(
  { temperature: Type.Number({ exclusiveMinimum: 0 }), bias: Type.Number() },
  { additionalProperties: false },
);

const SetName = Type.Union(LABEL_SET_NAMES.map((n) => Type.Literal(n)));

/** The lists an answer carries, each with its own length and score floor. */
export const OUTPUT_LISTS = ['audience', 'iab_1_0', 'iab_2_2', 'topics', 'keywords'] as const;
export type OutputList = (typeof OUTPUT_LISTS)[number];

const OutputLimits = Type.Object(
  { top_k: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })), min_score: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })) },
  { additionalProperties: false },
);

export const ManifestSchema = Type.Object(
  {
    format: Type.Literal(PACK_FORMAT),
    id: Type.String({ minLength: 1 }),
    kind: Type.Union(PACK_KINDS.map((k) => Type.Literal(k))),
    backbone: Type.Object(
      {
        /** An embedding model id of the catalog (its directory under MODELS_DIR, or models.<id>.path). */
        model: Type.String({ minLength: 1 }),
        /** A directory holding the backbone instead, absolute or relative to the pack. */
        path: Type.Optional(Type.String({ minLength: 1 })),
      },
      { additionalProperties: false },
    ),
    label_sets: Type.Array(SetName, { minItems: 1, uniqueItems: true }),
    top_k: Type.Integer({ minimum: 1, maximum: 100 }),
    min_score: Type.Number({ minimum: 0, maximum: 1 }),
    /** Per output list, overriding top_k / min_score. */
    outputs: Type.Optional(
      Type.Partial(
        Type.Object(
          Object.fromEntries(OUTPUT_LISTS.map((name) => [name, OutputLimits])) as Record<OutputList, typeof OutputLimits>,
          { additionalProperties: false },
        ),
      ),
    ),
    /** Zero-shot scores: p = sigmoid(cosine / temperature + bias), per label set. */
    calibration: Type.Record(Type.String(), Calibration),
    /** Trained heads per label set, files relative to the pack (replace zero-shot scores of that set). */
    heads: Type.Record(Type.String(), Type.String({ minLength: 1 })),
    /** Moderation: per-category decision thresholds on the calibrated score. */
    thresholds: Type.Optional(Type.Record(Type.String(), Type.Number({ minimum: 0, maximum: 1 }))),
  },
  { additionalProperties: false },
);

export type PackManifest = Static<typeof ManifestSchema>;
export type SetCalibration = Static<typeof Calibration>;

/** Zero-shot defaults: cosine 0.3 ↦ 0.5, steep enough that unrelated labels fall near 0. */
export const ZERO_SHOT_CALIBRATION: SetCalibration = { temperature: 0.05, bias: -6 };

export class ManifestError extends Error {}

/** The length and score floor of one output list: its own setting, else the pack's. */
export function outputLimits(manifest: PackManifest, list: OutputList): { topK: number; minScore: number } {
  const own = manifest.outputs?.[list];
  return { topK: own?.top_k ?? manifest.top_k, minScore: own?.min_score ?? manifest.min_score };
}

/** `<id>/pack.json: key <path>: <what>`; never the absolute directory (messages reach clients). */
function problem(packId: string, key: string, what: string): ManifestError {
  return new ManifestError(`${packId}/${MANIFEST_FILE}: key ${key || '(root)'}: ${what}`);
}

/** Validates a parsed manifest: the schema, then what it cannot say (set names in records, categories). */
export function validateManifest(packId: string, raw: unknown): PackManifest {
  const first = Value.Errors(ManifestSchema, raw).First();
  if (first) throw problem(packId, first.path.slice(1).replaceAll('/', '.'), first.message);
  const manifest = raw as PackManifest;
  if (manifest.id !== packId) throw problem(packId, 'id', `is ${JSON.stringify(manifest.id)}, but the pack directory is ${packId}`);
  const sets = new Set<string>(manifest.label_sets);
  for (const record of ['calibration', 'heads'] as const) {
    for (const name of Object.keys(manifest[record])) {
      if (!sets.has(name)) throw problem(packId, `${record}.${name}`, `is not one of this pack's label_sets (${manifest.label_sets.join(', ')})`);
    }
  }
  for (const file of Object.values(manifest.heads)) {
    if (path.isAbsolute(file) || file.split(/[\\/]/).includes('..')) throw problem(packId, 'heads', `${file} must be a path inside the pack`);
  }
  const categories = new Set(MODERATION_LABELS.map((c) => c.name));
  for (const name of Object.keys(manifest.thresholds ?? {})) {
    if (!categories.has(name)) throw problem(packId, `thresholds.${name}`, 'is not a moderation category');
  }
  if (manifest.kind === 'moderation' && !(sets.has('moderation') && sets.has('unsafe'))) {
    throw problem(packId, 'label_sets', 'a moderation pack needs the moderation and unsafe label sets');
  }
  if (manifest.kind !== 'moderation' && !sets.has('iab_content_2_2')) {
    throw problem(packId, 'label_sets', 'an IAB pack needs the iab_content_2_2 label set');
  }
  return manifest;
}

/** Reads and validates `<dir>/pack.json`; null when the file does not exist. */
export async function readManifest(dir: string, packId: string): Promise<PackManifest | null> {
  let text: string;
  try {
    text = await readFile(path.join(dir, MANIFEST_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    // The place in Sluice's words, not the parser's: this message reaches clients in a 503.
    const place = jsonErrorPlace(text);
    throw problem(packId, '', place ? `not valid JSON (${placeAndReason(place)})` : 'not valid JSON');
  }
  return validateManifest(packId, raw);
}

const KIND_OF: Record<string, PackKind> = {
  'zlm-v1-iab-classify-edge': 'iab-edge',
  'zlm-v2-iab-classify-edge-enriched': 'iab-enriched',
  'zlm-v1-multi-iab-classify': 'iab-multi',
  'zlm-v1-iab-domain-classifier': 'iab-domain',
  'zlm-v1-moderation-edge': 'moderation',
};

/** The model ids served by classifier packs. */
export const PACK_MODEL_IDS: readonly string[] = Object.keys(KIND_OF);

export const isPackModel = (id: string): boolean => Object.hasOwn(KIND_OF, id);

export const DEFAULT_BACKBONE = 'all-minilm-l6-v2';

/** The manifest `sluice models pull` (or first use) writes for a catalog pack id. */
export function defaultManifest(id: string, backbone: string = DEFAULT_BACKBONE): PackManifest {
  const kind = KIND_OF[id];
  if (!kind) throw new Error(`${id} is not a classifier pack`);
  const sets: LabelSetName[] =
    kind === 'moderation'
      ? ['moderation', 'unsafe']
      : kind === 'iab-domain'
        ? ['iab_content_2_2', 'user_intent']
        : kind === 'iab-edge'
          ? ['iab_content_2_2', 'iab_audience_1_1']
          : ['iab_content_2_2', 'iab_audience_1_1', 'user_intent'];
  return {
    format: PACK_FORMAT,
    id,
    kind,
    backbone: { model: backbone },
    label_sets: sets,
    top_k: 5,
    min_score: kind === 'moderation' ? 0 : 0.1,
    calibration: Object.fromEntries(sets.map((s) => [s, { ...ZERO_SHOT_CALIBRATION }])),
    heads: {},
    ...(kind === 'moderation' ? { thresholds: Object.fromEntries(MODERATION_LABELS.map((c) => [c.name, 0.5])) } : {}),
  };
}
