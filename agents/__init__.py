"""Agents."""
