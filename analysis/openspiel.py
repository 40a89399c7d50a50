"""Kept import path of the OpenSpiel adapter, now `niwa.analysis.interop.openspiel`
(solver/agents.py imports this name until it loads agent providers through the
`niwa.agents` entry points)."""

from niwa.analysis.interop.openspiel import *  # noqa: F401,F403
from niwa.analysis.interop.openspiel import register_agents  # noqa: F401
