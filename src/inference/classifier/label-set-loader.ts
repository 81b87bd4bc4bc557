/**
 * The label sets of the classifier packs, their IAB trees read from the taxonomy files
 * this installation ships (assets/iab). Each set is built once per process.
 */
import { buildLabelSet, type LabelSet, type LabelSetName } from '../../domain/shared/classification/label-sets.js';
import { loadIabTaxonomies } from './taxonomy.js';

const built = new Map<LabelSetName, LabelSet>();

const shippedTrees = () => {
  const { content22, audience11 } = loadIabTaxonomies();
  return { content22: content22.nodes, audience11: audience11.nodes };
};

/** The label set named `name`, built once per process. */
export function labelSet(name: LabelSetName): LabelSet {
  let set = built.get(name);
  if (!set) {
    set = buildLabelSet(name, shippedTrees);
    built.set(name, set);
  }
  return set;
}
