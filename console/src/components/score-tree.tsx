/**
 * A taxonomy tree with a score bar per label: nested lists, each branch behind a
 * disclosure button (`aria-expanded`, `aria-controls`), so it reads as lists of lists to a
 * screen reader and every branch opens and closes from the keyboard.
 */
import { useId, useState } from 'react';
import { branchKeys, type ScoreTree, type TreeNode } from '../lib/taxonomy.js';
import { ProgressBar } from './common.js';

export function ScoreTreeView({ tree }: { tree: ScoreTree }) {
  const [open, setOpen] = useState<ReadonlySet<string>>(() => new Set(branchKeys(tree.nodes)));
  const headingId = useId();
  const toggle = (key: string) =>
    setOpen((now) => {
      const next = new Set(now);
      if (next.has(key)) next.delete(key);
      else next.add(key);
      return next;
    });
  const branches = branchKeys(tree.nodes);
  return (
    <section aria-labelledby={headingId} className="score-tree" data-testid={`tree-${tree.id}`}>
      <h3 id={headingId}>{tree.title}</h3>
      {tree.nodes.length === 0 ? (
        <p className="sub">No label scored above the model's minimum.</p>
      ) : (
        <>
          {branches.length > 0 && (
            <div className="actions" role="group" aria-label={`${tree.title} tree`}>
              <button type="button" className="secondary" onClick={() => setOpen(new Set(branches))}>
                Expand all
              </button>
              <button type="button" className="secondary" onClick={() => setOpen(new Set())}>
                Collapse all
              </button>
            </div>
          )}
          <Branch nodes={tree.nodes} open={open} toggle={toggle} label={tree.title} />
        </>
      )}
    </section>
  );
}

interface BranchProps {
  nodes: TreeNode[];
  open: ReadonlySet<string>;
  toggle: (key: string) => void;
  label: string;
  id?: string;
  hidden?: boolean;
}

function Branch({ nodes, open, toggle, label, id, hidden }: BranchProps) {
  return (
    <ul className="tree" id={id} aria-label={label} hidden={hidden}>
      {nodes.map((node) => (
        <Node key={node.key} node={node} open={open} toggle={toggle} />
      ))}
    </ul>
  );
}

function Node({ node, open, toggle }: { node: TreeNode; open: ReadonlySet<string>; toggle: (key: string) => void }) {
  const childrenId = useId();
  const expanded = open.has(node.key);
  const score = node.score === null ? 'not listed' : node.score.toFixed(4);
  return (
    <li>
      <div className="tree-row">
        {node.children.length > 0 ? (
          <button type="button" className="tree-toggle" aria-expanded={expanded} aria-controls={childrenId} onClick={() => toggle(node.key)}>
            <span aria-hidden="true">{expanded ? '▾' : '▸'}</span> {node.name}
          </button>
        ) : (
          <span className="tree-leaf">{node.name}</span>
        )}
        <span className="sub tree-score">{score}</span>
      </div>
      {node.score !== null && <ProgressBar value={node.score * 100} label={`${node.key} score`} />}
      {node.children.length > 0 && <Branch nodes={node.children} open={open} toggle={toggle} label={`Under ${node.name}`} id={childrenId} hidden={!expanded} />}
    </li>
  );
}
