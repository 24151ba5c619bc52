"""Test data and helpers shared by several test modules (not tests themselves)."""
