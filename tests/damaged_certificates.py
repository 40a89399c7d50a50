"""Certificates damaged on purpose, for the tests that a checker refuses them."""

import numpy as np


def cut_one_reply(cert):
    """`cert` with one loser reply removed (a certificate the checker must refuse)."""
    loser = next(i for i in range(cert.nodes) if cert.offsets[i + 1] - cert.offsets[i] > 1)
    keep = np.ones(cert.edges, dtype=bool)
    keep[int(cert.offsets[loser + 1]) - 1] = False
    cert.actions, cert.children = cert.actions[keep], cert.children[keep]
    cert.offsets = cert.offsets.copy()
    cert.offsets[loser + 1:] -= 1
    return cert
