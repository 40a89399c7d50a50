"""Proof-set numbers on the two-level proof's top tree: each open leaf counted once.

Model. The top tree (niwa.solver.proof_tree) is proof-number search on a DAG: a node's
number on its summing side adds each child's number, so a leaf reached along two paths is
counted once per path, and where positions transpose heavily (Lotus's pro opening) both
numbers are overstated. Proof-set search (Mueller, "Proof-set search", Computers and Games
2002) keeps, for a node and a side, the cheapest set of open leaves whose proof would make
that side win there: at that side's own nodes the cheapest child's set, at the other
side's the union of all the children's sets. A set weighs the sum of its leaves' numbers
(pn for the leaf's mover when the side moves there, dn otherwise), each leaf once, so the
weight is never above the tree's own number and is equal to it on a tree.

Use. ProofTree(set_plies=N) chooses the first N plies below the focus by these weights
(`set_line`), and the tree's own numbers choose below that (ProofTree._set_target), afresh
at every selection or every `set_every`. The weights only order the work; every value is
still a df-pn proof combined by min and sum. Computing the sets of a subtree costs about
2 CPU s for 80,000 nodes in Python (the sets are frozensets of leaf keys): a tree that size
cannot afford a fresh choice at every job, and a kept choice acts as a focus, which costs
nodes where the tree's own choice works (bench/perfect-play/pro-rule/set_choice.py).

>>> from niwa.solver.proof_tree import Node
>>> root = Node(1, (), None, 0, 1, 1, 0)
>>> a, b = Node(2, (0,), root, 1, 1, 1, 1), Node(3, (1,), root, 1, 1, 1, 1)
>>> shared = Node(4, (0, 0), a, 0, 5, 3, 2)
>>> shared.parents.append(b)
>>> root.children, a.children, b.children = [a, b], [shared], [shared]
>>> proof_set(root, 1, {})[0]      # seat 1 refutes both moves through one leaf: 3, not 6
3
"""

from __future__ import annotations

# an infinite proof/disproof number (as in proof.pyx); defined here, the lower module,
# because proof_tree imports this one (proof_tree.INF is this value, imported)
INF = 0xFFFFFFFF


def proof_set(node, side: int, memo: dict) -> tuple[int, frozenset | None]:
    """(weight, leaves) of the cheapest set of open leaves below `node` whose proof makes
    `side` win there (weight INF and no set when `side` has lost it). Leaves are top-tree
    keys; `memo` is keyed by (id(node), side) and holds the answers of one computation."""
    got = memo.get((id(node), side))
    if got is not None:
        return got
    if node.mover < 0 or node.proven:
        winner = None if node.mover < 0 else node.mover if node.pn == 0 else 1 - node.mover
        got = (0, frozenset()) if winner == side else (INF, None)
    elif node.children is None:
        got = (node.pn if node.mover == side else node.dn, frozenset((node.key,)))
        memo[("leaf", side, node.key)] = got[0]
    elif node.mover == side:
        got = min((proof_set(c, side, memo) for c in node.children), key=lambda x: x[0])
    else:
        parts = [proof_set(c, side, memo) for c in node.children]
        if any(w >= INF for w, _ in parts):
            got = (INF, None)
        else:
            leaves = frozenset().union(*(x for _, x in parts))
            got = (min(sum(memo[("leaf", side, k)] for k in leaves), INF), leaves)
    memo[id(node), side] = got
    return got


def set_line(node, plies: int, memo: dict | None = None) -> list:
    """The nodes below `node` (itself first) that its movers choose for up to `plies`
    plies, each taking the open child with the lightest proof set for that mover (the
    tree's own numbers break ties); it stops early at a leaf or a decided node."""
    memo = {} if memo is None else memo
    line = [node]
    for _ in range(plies):
        if node.children is None or node.proven:
            break
        side, here = node.mover, node
        node = min((c for c in node.children if not c.proven),
                   key=lambda c: (proof_set(c, side, memo)[0], here.seen(c)))
        line.append(node)
    return line


def first_moves_once(tree) -> dict[str, tuple[int, int]]:
    """Each open first move of a ProofTree with its (pn, dn) counted once, in the root
    mover's view (as ProofTreeResult.first_numbers has the tree's own): what --status
    shows beside the tree's numbers."""
    root, memo, out = tree.root, {}, {}
    me = root.mover
    for a, c in zip(root.actions or [], root.children or [], strict=True):
        if c.proven:
            continue
        pn = proof_set(c, me, memo)[0]
        dn = proof_set(c, 1 - me, memo)[0]
        out[tree.root_state.action_to_string(a)] = (pn, dn)
    return out
