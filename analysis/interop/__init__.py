"""Adapters to other game-AI frameworks (OpenSpiel)."""
